//go:build !windows

package command

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// With no HOME, the state goes to the user's home in /etc/passwd.
func TestStateHomeWithoutHOME(t *testing.T) {
	home := passwdHome(t)
	env := &Env{Getenv: func(string) string { return "" }}
	if got, want := StateHome(env), filepath.Join(home, ".local", "state"); got != want {
		t.Fatalf("StateHome with no HOME = %q, want %q", got, want)
	}
}

// passwdHome is this user's home as /etc/passwd gives it, read here rather
// than by homeOfUser, the code under test (were the test to ask it, a
// homeOfUser that found nothing would skip the test, not fail it). Without
// an entry whose home is a directory of this user's, the test skips, or
// fails when CI=true.
func passwdHome(t *testing.T) string {
	t.Helper()
	data, _ := os.ReadFile("/etc/passwd")
	for line := range strings.Lines(string(data)) {
		f := strings.Split(strings.TrimRight(line, "\n"), ":")
		if len(f) < 6 || f[2] != strconv.Itoa(os.Getuid()) {
			continue
		}
		if st, err := os.Lstat(f[5]); err == nil && st.IsDir() {
			if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) == os.Getuid() {
				return f[5]
			}
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("CI=true but this user has no entry in /etc/passwd with a home directory of its own")
	}
	t.Skip("this user has no entry in /etc/passwd with a home directory of its own: run the test as a user that has one")
	return ""
}

// The last place for the state is the user's own directory in the
// temporary directory; one someone else made first (open to others, or
// theirs) is not used.
func TestPrivateTempState(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	want := filepath.Join(tmp, "teamkit-state-"+strconv.Itoa(os.Getuid()))
	if got := privateTempDir(); got != want {
		t.Fatalf("privateTempDir = %q, want %q", got, want)
	}
	if st, err := os.Stat(want); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("the state directory: %v, %v; want mode 0700", st, err)
	}
	// Planted: open to every user.
	if err := os.Chmod(want, 0o777); err != nil {
		t.Fatal(err)
	}
	got := privateTempDir()
	if got == want || !strings.HasPrefix(got, want+"-") {
		t.Fatalf("privateTempDir with %s open to all = %q, want a fresh directory beside it", want, got)
	}
	if st, err := os.Stat(got); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("the fresh directory: %v, %v; want mode 0700", st, err)
	}
	// Planted: another user's (only root can make one here).
	if os.Getuid() == 0 {
		if err := os.Chmod(want, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(want, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if got := privateTempDir(); got == want {
			t.Fatalf("privateTempDir used %s, which another user owns", want)
		}
	}
	// Neither the planted directory nor a fresh one (the temporary
	// directory cannot be written): a path nothing can be made in, never
	// the planted one.
	if err := os.Chmod(want, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", filepath.Join(os.DevNull, "gone"))
	planted := filepath.Join(os.DevNull, "gone", "teamkit-state-"+strconv.Itoa(os.Getuid()))
	if got := privateTempDir(); got == planted || !strings.HasPrefix(got, os.DevNull+string(filepath.Separator)) {
		t.Fatalf("privateTempDir with no temporary directory = %q, want a path under %s", got, os.DevNull)
	}
}

// With HOME unset, a home in /etc/passwd that is not the user's own
// directory (a service account's /nonexistent) is passed over.
func TestOwnDir(t *testing.T) {
	if !ownDir(t.TempDir()) {
		t.Error("a directory this user made is not its own")
	}
	if ownDir("/nonexistent-home") || ownDir(os.DevNull) {
		t.Error("a missing path, or a device, is taken for the user's own directory")
	}
	if os.Getuid() != 0 && ownDir("/") {
		t.Error("/ is taken for this user's own directory")
	}
}
