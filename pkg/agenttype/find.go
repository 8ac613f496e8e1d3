package agenttype

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	teamkit "github.com/teamkit/teamkit"
	"github.com/teamkit/teamkit/internal/atomicfile"
	"github.com/teamkit/teamkit/pkg/names"
	"github.com/teamkit/teamkit/pkg/readlimit"
)

// ErrUnknownType is wrapped by the error Find returns when no directory on
// the types path and no built-in type has the name asked for.
var ErrUnknownType = errors.New("unknown type")

// BuiltinSource is the Source of a type built into the binary.
const BuiltinSource = "built-in"

const (
	confFile     = "type.conf"
	templateFile = "template.md"
)

// MaxFile is the largest type.conf or template.md read (1 MiB): a type.conf
// is a dozen lines and a template a page or two, and a briefing delivered as
// an argument must fit in 128 KiB anyway. A type's files must be regular
// files (or symlinks to them): /dev/zero is refused rather than read until
// memory runs out, and a FIFO at once rather than waited on.
const MaxFile = 1 << 20

// SharedTemplate is the briefing of a type without a template.md: the shared
// teamkit briefing and nothing else.
const SharedTemplate = `{{template "teamkit" .}}` + "\n"

// SearchDirs returns the directories searched for user types, most important
// first: each non-empty entry of TEAMKIT_TYPES (a path list: colon-separated,
// semicolon-separated on Windows, whose paths hold a drive's colon), then
// $XDG_CONFIG_HOME/teamkit/types, or $HOME/.config/teamkit/types when
// XDG_CONFIG_HOME is unset or relative (the XDG spec says to ignore a relative
// one; the home is Home's). The built-in types come after all of these; see Finder.
func SearchDirs(getenv func(string) string) []string {
	var dirs []string
	seen := map[string]bool{}
	add := func(d string) {
		d = filepath.Clean(d)
		if !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	for _, d := range filepath.SplitList(getenv("TEAMKIT_TYPES")) {
		if d != "" {
			add(d)
		}
	}
	if x := getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		add(filepath.Join(x, "teamkit", "types"))
	} else if h := Home(getenv); h != "" {
		add(filepath.Join(h, ".config", "teamkit", "types"))
	}
	return dirs
}

// Builtin returns the built-in types, one directory per type.
func Builtin() fs.FS {
	sub, err := fs.Sub(teamkit.BuiltinTypes, "types")
	if err != nil {
		// fs.Sub only fails on an invalid path, and "types" is a valid one.
		panic(err)
	}
	return sub
}

// NewFinder returns the Finder every command uses: the user directories from
// SearchDirs(getenv), then the built-in types.
func NewFinder(getenv func(string) string) Finder {
	return Finder{Dirs: SearchDirs(getenv), Builtin: Builtin()}
}

// Finder looks types up by name: the first of Dirs holding <name>/type.conf
// wins, then Builtin (an fs.FS with one directory per type). A user type
// therefore shadows a built-in type of the same name.
type Finder struct {
	Dirs    []string
	Builtin fs.FS
}

// Type is an agent type ready for spawn.
type Type struct {
	Name string
	// Source is the search directory the type came from, or BuiltinSource.
	Source string
	// Dir is the absolute directory holding the type's files on disk; it is
	// "" for a built-in type until Materialize writes one out.
	Dir      string
	Conf     Conf
	Template string
	// FS holds the type's files (type.conf, template.md and anything the type
	// ships), for built-in and on-disk types alike.
	FS fs.FS
}

// Listing is one type found on the types path.
type Listing struct {
	Name   string
	Source string
	// Shadowed is true when a type of the same name earlier on the path is
	// the one Find returns.
	Shadowed bool
}

// Find returns the type called name. The name is checked before any file is
// touched, so "../x" can never leave the types directories.
func (f Finder) Find(name string) (*Type, error) {
	if err := names.Check("type", name); err != nil {
		return nil, err
	}
	for _, dir := range f.Dirs {
		tdir := filepath.Join(dir, name)
		data, err := readlimit.Regular(filepath.Join(tdir, confFile), MaxFile)
		if isAbsent(err) {
			if err := dangling(tdir, filepath.Join(tdir, confFile)); err != nil {
				return nil, fmt.Errorf("type %q: %w", name, err)
			}
			if err := confless(tdir); err != nil {
				return nil, fmt.Errorf("type %q: %w", name, err)
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("type %q: %w", name, err)
		}
		abs, err := filepath.Abs(tdir)
		if err != nil {
			return nil, fmt.Errorf("type %q: %w", name, err)
		}
		return load(name, dir, abs, os.DirFS(abs), filepath.Join(tdir, confFile), filepath.Join(tdir, templateFile), data)
	}
	if f.Builtin != nil {
		data, err := fs.ReadFile(f.Builtin, path.Join(name, confFile))
		switch {
		case err == nil:
			sub, err := fs.Sub(f.Builtin, name)
			if err != nil {
				return nil, fmt.Errorf("built-in type %q: %w", name, err)
			}
			at := "built-in:" + name + "/"
			return load(name, BuiltinSource, "", sub, at+confFile, at+templateFile, data)
		case !isAbsent(err):
			return nil, fmt.Errorf("built-in type %q: %w", name, err)
		}
	}
	return nil, f.unknown(name)
}

func load(name, source, dir string, files fs.FS, confPath, tmplPath string, conf []byte) (*Type, error) {
	c, err := Parse(confPath, conf)
	if err != nil {
		return nil, err
	}
	var tmpl []byte
	if dir != "" {
		tmpl, err = readlimit.Regular(tmplPath, MaxFile) // its errors name tmplPath
	} else {
		// Built in: a file of the binary, bounded by it.
		tmpl, err = fs.ReadFile(files, templateFile)
		if err != nil {
			err = fmt.Errorf("reading %s: %w", tmplPath, err)
		}
	}
	if isAbsent(err) && dir != "" {
		if derr := dangling(tmplPath); derr != nil {
			err = derr
		}
	}
	if isAbsent(err) {
		// Most types want exactly the shared briefing; a type.conf alone
		// is a complete type.
		tmpl, err = []byte(SharedTemplate), nil
	}
	if err != nil {
		return nil, fmt.Errorf("type %q (%s): %w", name, source, err)
	}
	return &Type{Name: name, Source: source, Dir: dir, Conf: c, Template: string(tmpl), FS: files}, nil
}

// isAbsent reports whether err means "no such file here", including a path
// whose parent is a plain file, so that a stray file on the path is skipped
// like a missing directory.
func isAbsent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// dangling returns an error naming the first of paths that is a symlink to
// nothing, or nil. Such a path is there, broken, not absent: skipped, the
// type of the same name further down the path (a built-in one the user's
// was written to restrict) or the shared briefing would stand in for it.
func dangling(paths ...string) error {
	for _, p := range paths {
		st, err := os.Lstat(p)
		if err != nil || st.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		if _, err := os.Stat(p); isAbsent(err) {
			target, _ := os.Readlink(p)
			return fmt.Errorf("%s: is a symlink to %s, which does not exist", p, target)
		}
	}
	return nil
}

// confless returns an error when tdir holds a template.md but no
// type.conf: someone meant a type there (a template alone, to change a
// built-in type's briefing, say), and passing it by would start the type
// of the same name further down the path, or none, without a word.
func confless(tdir string) error {
	if _, err := os.Lstat(filepath.Join(tdir, templateFile)); err != nil {
		return nil
	}
	return fmt.Errorf("%s holds a %s but %w (a template alone does not change the type of the same name further down the path)",
		tdir, templateFile, ErrNoConf)
}

// unknown builds the error for a missing type, listing what does exist so a
// typo is one glance away from its fix.
func (f Finder) unknown(name string) error {
	list, listErr := f.List()
	var groups []string
	for _, src := range f.sources() {
		var here []string
		for _, l := range list {
			if l.Source == src && !l.Shadowed {
				here = append(here, l.Name)
			}
		}
		if len(here) > 0 {
			groups = append(groups, strings.Join(here, ", ")+" ("+src+")")
		}
	}
	msg := fmt.Sprintf("%q; ", name)
	if len(groups) == 0 {
		msg += "no types found"
	} else {
		msg += "known types: " + strings.Join(groups, ", ")
	}
	if listErr != nil {
		msg += " (listing was incomplete: " + listErr.Error() + ")"
	}
	return &UnknownTypeError{Name: name, msg: ErrUnknownType.Error() + " " + msg}
}

// UnknownTypeError is the error Find returns for a name no type has; it
// wraps ErrUnknownType.
type UnknownTypeError struct {
	Name string
	msg  string
}

func (e *UnknownTypeError) Error() string { return e.msg }

// Unwrap makes errors.Is(err, ErrUnknownType) hold.
func (e *UnknownTypeError) Unwrap() error { return ErrUnknownType }

// sources returns the Source of each place searched, in search order.
func (f Finder) sources() []string {
	srcs := append([]string(nil), f.Dirs...)
	if f.Builtin != nil {
		srcs = append(srcs, BuiltinSource)
	}
	return srcs
}

// List returns every type on the path, sorted by name and, for one name, in
// search order, so the first of each name is the one Find returns. A search
// directory that does not exist is skipped; one that cannot be read is an
// error.
func (f Finder) List() ([]Listing, error) {
	var list []Listing
	add := func(name, source string) {
		list = append(list, Listing{Name: name, Source: source})
	}
	for _, dir := range f.Dirs {
		entries, err := os.ReadDir(dir)
		if isAbsent(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("listing types: %w", err)
		}
		for _, e := range entries {
			if names.Check("type", e.Name()) != nil {
				continue
			}
			// Stat, not the entry's own type, so a symlinked type directory counts.
			if st, err := os.Stat(filepath.Join(dir, e.Name(), confFile)); err == nil && st.Mode().IsRegular() {
				add(e.Name(), dir)
			}
		}
	}
	if f.Builtin != nil {
		entries, err := fs.ReadDir(f.Builtin, ".")
		if err != nil {
			return nil, fmt.Errorf("listing built-in types: %w", err)
		}
		for _, e := range entries {
			if !e.IsDir() || names.Check("type", e.Name()) != nil {
				continue
			}
			if _, err := fs.Stat(f.Builtin, path.Join(e.Name(), confFile)); err == nil {
				add(e.Name(), BuiltinSource)
			}
		}
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	for i := 1; i < len(list); i++ {
		list[i].Shadowed = list[i].Name == list[i-1].Name
	}
	return list, nil
}

// Materialize makes the type's files available on disk so {typedir} can name
// them, and returns that directory. An on-disk type is already there: its Dir
// is returned unchanged. A built-in type is written to dir/<name>/, scripts
// (*.sh) executable; each file is replaced through a temporary file and a
// rename, and only when its content or mode differs, so concurrent spawns
// never see a half-written script and an unchanged type costs no writes.
func (t *Type) Materialize(dir string) (string, error) {
	if t.Dir != "" {
		return t.Dir, nil
	}
	if t.FS == nil {
		return "", fmt.Errorf("type %q has no files to materialize", t.Name)
	}
	if dir == "" {
		return "", fmt.Errorf("materializing type %q: no directory given", t.Name)
	}
	root, err := filepath.Abs(filepath.Join(dir, t.Name))
	if err != nil {
		return "", fmt.Errorf("materializing type %q: %w", t.Name, err)
	}
	// dir is in teamkit's state directory, which may not exist yet: made
	// here, it is made as every other maker of it does, the user's alone.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("materializing type %q: %w", t.Name, err)
	}
	err = fs.WalkDir(t.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(root, filepath.FromSlash(p))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := fs.ReadFile(t.FS, p)
		if err != nil {
			return err
		}
		mode := fs.FileMode(0o644)
		if strings.HasSuffix(p, ".sh") {
			mode = 0o755
		}
		return writeIfChanged(target, data, mode)
	})
	if err != nil {
		return "", fmt.Errorf("materializing type %q into %s: %w", t.Name, root, err)
	}
	return root, nil
}

// writeIfChanged replaces target with data unless it already holds data with
// mode. What is there is read only when it is a regular file (else it is an
// error naming it: a FIFO would block the read) and only up to one byte more
// than data (/dev/zero behind a symlink is simply different).
func writeIfChanged(target string, data []byte, mode fs.FileMode) error {
	old, err := readlimit.Regular(target, int64(len(data)))
	var notRegular *readlimit.NotRegularError
	if errors.As(err, &notRegular) {
		return err
	}
	if err == nil && bytes.Equal(old, data) {
		if st, err := os.Stat(target); err == nil && samePerm(st.Mode().Perm(), mode) {
			return nil
		}
	}
	return atomicfile.Write(target, data, mode)
}
