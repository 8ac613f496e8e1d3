//go:build !windows

package agenttype

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"

	"github.com/teamkit/teamkit/pkg/names"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestSearchDirs(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want []string
	}{
		{map[string]string{"HOME": "/home/u"}, []string{"/home/u/.config/teamkit/types"}},
		{map[string]string{"HOME": "/home/u", "XDG_CONFIG_HOME": "/cfg"}, []string{"/cfg/teamkit/types"}},
		{map[string]string{"HOME": "/home/u", "XDG_CONFIG_HOME": "rel/cfg"}, []string{"/home/u/.config/teamkit/types"}},
		{map[string]string{"TEAMKIT_TYPES": "/a::/b/:", "HOME": "/h"}, []string{"/a", "/b", "/h/.config/teamkit/types"}},
		{map[string]string{"TEAMKIT_TYPES": "/a:/h/.config/teamkit/types:/a", "HOME": "/h"}, []string{"/a", "/h/.config/teamkit/types"}},
		{map[string]string{}, nil},
	}
	for _, tt := range tests {
		if got := SearchDirs(env(tt.env)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SearchDirs(%v) = %q, want %q", tt.env, got, tt.want)
		}
	}
}

// writeType creates dir/name with a type.conf and, unless tmpl is "-", a
// template.md.
func writeType(t *testing.T, dir, name, conf, tmpl string) {
	t.Helper()
	d := filepath.Join(dir, name)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "type.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	if tmpl != "-" {
		if err := os.WriteFile(filepath.Join(d, "template.md"), []byte(tmpl), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func fakeBuiltin() fstest.MapFS {
	return fstest.MapFS{
		"alpha/type.conf":   {Data: []byte("command=alpha {prompt}\n")},
		"alpha/template.md": {Data: []byte("builtin alpha")},
		"beta/type.conf":    {Data: []byte("command=sh {typedir}/run.sh {prompt_file}\nboot=file\n")},
		"beta/template.md":  {Data: []byte("builtin beta")},
		"beta/run.sh":       {Data: []byte("#!/bin/sh\necho hi\n")},
		"beta/lib/data.txt": {Data: []byte("data")},
		"notype/README":     {Data: []byte("not a type: no type.conf")},
	}
}

func TestFindShadowsAndLists(t *testing.T) {
	user, site := t.TempDir(), t.TempDir()
	writeType(t, user, "alpha", "command=user-alpha {prompt}\n", "user alpha")
	writeType(t, site, "alpha", "command=site-alpha {prompt}\n", "site alpha")
	writeType(t, site, "gamma", "command=gamma -\nboot=stdin\n", "site gamma")
	// Not types: a stray file, a directory without type.conf, an invalid name.
	os.WriteFile(filepath.Join(user, "stray"), []byte("x"), 0o644)
	os.MkdirAll(filepath.Join(user, "empty"), 0o755)
	writeType(t, user, ".hidden", "command=x {prompt}", "x")
	f := Finder{Dirs: []string{user, filepath.Join(user, "missing"), site}, Builtin: fakeBuiltin()}

	ty, err := f.Find("alpha")
	if err != nil {
		t.Fatal(err)
	}
	if ty.Source != user || ty.Dir != filepath.Join(user, "alpha") || ty.Template != "user alpha" || ty.Conf.Command[0] != "user-alpha" {
		t.Errorf("Find(alpha) = %+v, want the user type", ty)
	}
	if data, err := fs.ReadFile(ty.FS, "template.md"); err != nil || string(data) != "user alpha" {
		t.Errorf("on-disk type FS: %q, %v", data, err)
	}
	if ty, err := f.Find("gamma"); err != nil || ty.Source != site || ty.Conf.Boot != BootStdin {
		t.Errorf("Find(gamma) = %+v, %v; want the site type", ty, err)
	}
	ty, err = f.Find("beta")
	if err != nil {
		t.Fatal(err)
	}
	if ty.Source != BuiltinSource || ty.Dir != "" || ty.Template != "builtin beta" || ty.FS == nil {
		t.Errorf("Find(beta) = %+v, want the built-in type", ty)
	}

	list, err := f.List()
	if err != nil {
		t.Fatal(err)
	}
	want := []Listing{
		{"alpha", user, false},
		{"alpha", site, true},
		{"alpha", BuiltinSource, true},
		{"beta", BuiltinSource, false},
		{"gamma", site, false},
	}
	if !reflect.DeepEqual(list, want) {
		t.Errorf("List =\n%+v\nwant\n%+v", list, want)
	}
}

func TestFindRelativeDirIsMadeAbsolute(t *testing.T) {
	dir := t.TempDir()
	writeType(t, dir, "rel", "command=x {prompt}", "t")
	t.Chdir(dir)
	ty, err := Finder{Dirs: []string{"."}}.Find("rel")
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(ty.Dir) || ty.Source != "." {
		t.Errorf("Find = Dir %q Source %q, want an absolute Dir and the search dir as Source", ty.Dir, ty.Source)
	}
}

func TestFindUnknown(t *testing.T) {
	user := t.TempDir()
	writeType(t, user, "mytype", "command=x {prompt}", "t")
	writeType(t, user, "alpha", "command=x {prompt}", "t")
	f := Finder{Dirs: []string{user}, Builtin: fakeBuiltin()}
	_, err := f.Find("codx")
	if !errors.Is(err, ErrUnknownType) {
		t.Fatalf("Find(codx) = %v, want ErrUnknownType", err)
	}
	want := `unknown type "codx"; known types: alpha, mytype (` + user + `), beta (built-in)`
	if err.Error() != want {
		t.Errorf("Find(codx) error\n%s\nwant\n%s", err, want)
	}

	_, err = Finder{}.Find("x")
	if !errors.Is(err, ErrUnknownType) || err.Error() != `unknown type "x"; no types found` {
		t.Errorf("Find on an empty path = %v", err)
	}
}

func TestFindRefusesBadNames(t *testing.T) {
	// A type.conf one level up must stay out of reach of "..".
	root := t.TempDir()
	writeType(t, root, "x", "command=x {prompt}", "t")
	f := Finder{Dirs: []string{filepath.Join(root, "x", "sub")}, Builtin: fakeBuiltin()}
	for _, name := range []string{"", "..", ".", "../x", "a/b", "alpha/..", "-x", "a b", strings.Repeat("a", 65)} {
		_, err := f.Find(name)
		if !errors.Is(err, names.ErrInvalid) {
			t.Errorf("Find(%q) = %v, want names.ErrInvalid", name, err)
		}
	}
}

func TestFindErrors(t *testing.T) {
	dir := t.TempDir()
	writeType(t, dir, "notmpl", "command=x {prompt}", "-")
	writeType(t, dir, "badconf", "command=x {prompt}\nlaunch=never", "t")
	f := Finder{Dirs: []string{dir}}

	// A type without template.md gets the shared briefing.
	ty, err := f.Find("notmpl")
	if err != nil || ty.Template != SharedTemplate {
		t.Errorf("Find(notmpl) = %v, %v; want the shared template", ty, err)
	}
	_, err = f.Find("badconf")
	if !errors.Is(err, ErrMalformed) || !strings.HasPrefix(err.Error(), filepath.Join(dir, "badconf", "type.conf")+":2: ") {
		t.Errorf("Find(badconf) = %v, want a parse error naming the file and line", err)
	}

	b := fstest.MapFS{"bad/type.conf": {Data: []byte("boot=x")}, "bad/template.md": {}}
	_, err = Finder{Builtin: b}.Find("bad")
	if !errors.Is(err, ErrMalformed) || !strings.HasPrefix(err.Error(), "built-in:bad/type.conf:1: ") {
		t.Errorf("Find(built-in with a bad conf) = %v", err)
	}
}

func TestFindSkipsFileInPlaceOfDir(t *testing.T) {
	// A search dir that is a plain file is skipped like a missing one.
	file := filepath.Join(t.TempDir(), "plain")
	os.WriteFile(file, []byte("x"), 0o644)
	f := Finder{Dirs: []string{file}, Builtin: fakeBuiltin()}
	if ty, err := f.Find("alpha"); err != nil || ty.Source != BuiltinSource {
		t.Errorf("Find(alpha) = %+v, %v; want the built-in", ty, err)
	}
}

func TestFindConfIsDirectory(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "odd", "type.conf"), 0o755)
	_, err := Finder{Dirs: []string{dir}, Builtin: fakeBuiltin()}.Find("odd")
	if err == nil || errors.Is(err, ErrUnknownType) || !strings.Contains(err.Error(), `type "odd"`) {
		t.Errorf("Find(odd) = %v, want a read error, not a fall-through to other types", err)
	}
}

// A type's files must be regular files of at most MaxFile bytes: a device
// (here /dev/null behind a symlink) is refused, not read, with an error
// naming the file, and so is a type.conf over the limit. (A FIFO, which an
// open would wait on, is refused the same way: see readlimit and
// testdata/script/bounded_reads.txtar.)
func TestFindRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "devconf"), 0o755)
	os.Symlink(os.DevNull, filepath.Join(dir, "devconf", "type.conf"))
	writeType(t, dir, "devtmpl", "command=x {prompt}", "-")
	os.Symlink(os.DevNull, filepath.Join(dir, "devtmpl", "template.md"))
	writeType(t, dir, "bigconf", "#"+strings.Repeat("x", MaxFile)+"\ncommand=x {prompt}", "t")
	f := Finder{Dirs: []string{dir}, Builtin: fakeBuiltin()}
	for name, want := range map[string]string{
		"devconf": `type "devconf": ` + filepath.Join(dir, "devconf", "type.conf") + ": is a character device, not a regular file",
		"devtmpl": `type "devtmpl" (` + dir + "): " + filepath.Join(dir, "devtmpl", "template.md") + ": is a character device, not a regular file",
		"bigconf": `type "bigconf": ` + filepath.Join(dir, "bigconf", "type.conf") + ": larger than 1 MiB",
	} {
		if ty, err := f.Find(name); err == nil || err.Error() != want {
			t.Errorf("Find(%s) = %v, %v; want %q", name, ty, err, want)
		}
	}
}

func TestFindUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		// Root reads everything, and CI runs as root: run this test again
		// as nobody, from a copy of this binary nobody may execute.
		asNobody(t, "TestFindUnreadable")
		return
	}
	dir := t.TempDir()
	writeType(t, dir, "locked", "command=x {prompt}", "t")
	conf := filepath.Join(dir, "locked", "type.conf")
	os.Chmod(conf, 0)
	if _, err := (Finder{Dirs: []string{dir}}).Find("locked"); err == nil || !errors.Is(err, fs.ErrPermission) {
		t.Errorf("Find(locked) = %v, want a permission error", err)
	}
	os.Chmod(dir, 0)
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	if _, err := (Finder{Dirs: []string{dir}}).List(); err == nil {
		t.Error("List of an unreadable dir succeeded")
	}
}

func TestMaterializeBuiltin(t *testing.T) {
	ty, err := Finder{Builtin: fakeBuiltin()}.Find("beta")
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	dir, err := ty.Materialize(cache)
	if err != nil {
		t.Fatal(err)
	}
	if dir != filepath.Join(cache, "beta") {
		t.Errorf("Materialize = %q, want %q", dir, filepath.Join(cache, "beta"))
	}
	wantMode := map[string]fs.FileMode{"run.sh": 0o755, "type.conf": 0o644, "template.md": 0o644, "lib/data.txt": 0o644}
	for name, mode := range wantMode {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != mode {
			t.Errorf("%s mode %v, want %v", name, st.Mode().Perm(), mode)
		}
	}

	// Unchanged files are not rewritten; changed or re-moded ones are.
	script := filepath.Join(dir, "run.sh")
	before, _ := os.Stat(script)
	if _, err := ty.Materialize(cache); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(script)
	if !os.SameFile(before, after) {
		t.Error("an unchanged file was rewritten")
	}
	os.WriteFile(script, []byte("tampered"), 0o755)
	os.Chmod(filepath.Join(dir, "type.conf"), 0o600)
	if _, err := ty.Materialize(cache); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(script); string(data) != "#!/bin/sh\necho hi\n" {
		t.Errorf("changed file not restored: %q", data)
	}
	if st, _ := os.Stat(filepath.Join(dir, "type.conf")); st.Mode().Perm() != 0o644 {
		t.Errorf("mode not restored: %v", st.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}

	// What stands in the copy is read no further than the file it is
	// compared with (longer is simply different, so rewritten), and only
	// when it is a regular file: anything else is an error naming it.
	os.WriteFile(script, []byte(strings.Repeat("#", 1<<20)), 0o755)
	if _, err := ty.Materialize(cache); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(script); string(data) != "#!/bin/sh\necho hi\n" {
		t.Errorf("longer file not restored: %d bytes", len(data))
	}
	os.Remove(script)
	os.Symlink(os.DevNull, script)
	_, err = ty.Materialize(cache)
	if want := script + ": is a character device, not a regular file"; err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("Materialize over a device = %v, want an error ending %q", err, want)
	}
}

func TestMaterializeOnDisk(t *testing.T) {
	dir := t.TempDir()
	writeType(t, dir, "disk", "command=x {prompt}", "t")
	ty, err := Finder{Dirs: []string{dir}}.Find("disk")
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	got, err := ty.Materialize(cache)
	if err != nil || got != ty.Dir {
		t.Errorf("Materialize = %q, %v; want %q", got, err, ty.Dir)
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 0 {
		t.Errorf("Materialize of an on-disk type wrote %d entries", len(entries))
	}
	if _, err := (&Type{Name: "x"}).Materialize(cache); err == nil {
		t.Error("Materialize of a type without files succeeded")
	}
	b, _ := Finder{Builtin: fakeBuiltin()}.Find("alpha")
	if _, err := b.Materialize(""); err == nil {
		t.Error("Materialize into no directory succeeded")
	}
}

func TestNewFinder(t *testing.T) {
	home := t.TempDir()
	writeType(t, filepath.Join(home, ".config", "teamkit", "types"), "codex", "command=my-codex {prompt}", "mine")
	f := NewFinder(env(map[string]string{"HOME": home}))
	ty, err := f.Find("codex")
	if err != nil || ty.Conf.Command[0] != "my-codex" {
		t.Fatalf("Find(codex) = %+v, %v; want the user type shadowing the built-in", ty, err)
	}
	if ty, err := f.Find("probe"); err != nil || ty.Source != BuiltinSource {
		t.Errorf("Find(probe) = %+v, %v; want the built-in", ty, err)
	}
}

// asNobody runs test in a copy of this test binary as the user nobody
// (uid and gid 65534), with a temporary directory nobody can write, and
// fails t with its output if it fails.
func asNobody(t *testing.T, test string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "asnobody")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "agenttype.test")
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^"+test+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "TMPDIR="+dir, "HOME="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+test) {
		t.Fatalf("%s as nobody: %v\n%s", test, err, out)
	}
}

// A type.conf or template.md that is a symlink to nothing is there, broken:
// not absent. Skipping it would hand the agent another directory's (or the
// built-in) type of the same name, say the built-in codex the user's own
// codex type was written to restrict, or the shared briefing in place of
// the type's own, with not a word.
// A directory holding a template.md and no type.conf is an error that names
// it, not a directory passed by for the built-in type of the same name.
func TestFindRefusesTemplateWithoutConf(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "alpha"), 0o755)
	os.WriteFile(filepath.Join(dir, "alpha", "template.md"), []byte("my briefing"), 0o644)
	ty, err := Finder{Dirs: []string{dir}, Builtin: fakeBuiltin()}.Find("alpha")
	if err == nil {
		t.Fatalf("Find(alpha) = type from %s; want an error naming %s", ty.Source, filepath.Join(dir, "alpha"))
	}
	if !errors.Is(err, ErrNoConf) || !strings.Contains(err.Error(), filepath.Join(dir, "alpha")+" holds a template.md but no type.conf") {
		t.Errorf("Find(alpha) = %v", err)
	}
}

func TestFindRefusesDanglingSymlink(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "alpha"), 0o755)
	os.Symlink(filepath.Join(dir, "gone", "type.conf"), filepath.Join(dir, "alpha", "type.conf"))
	writeType(t, dir, "own", "command=x {prompt}", "-")
	os.Symlink(filepath.Join(dir, "gone", "template.md"), filepath.Join(dir, "own", "template.md"))
	os.Symlink(filepath.Join(dir, "gone"), filepath.Join(dir, "beta"))
	f := Finder{Dirs: []string{dir}, Builtin: fakeBuiltin()}
	for name, file := range map[string]string{"alpha": "type.conf", "own": "template.md", "beta": ""} {
		ty, err := f.Find(name)
		if err == nil {
			t.Errorf("Find(%s) = type from %s, template %q; want an error naming the dangling %s", name, ty.Source, ty.Template, file)
			continue
		}
		if p := filepath.Join(dir, name, file); !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "symlink") || errors.Is(err, ErrUnknownType) {
			t.Errorf("Find(%s) = %v; want an error naming %s as a dangling symlink", name, err, p)
		}
	}
}
