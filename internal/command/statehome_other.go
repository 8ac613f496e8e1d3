//go:build !windows

package command

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// osStateHomeVar is empty: Linux, macOS and FreeBSD follow XDG
// (~/.local/state). macOS's own ~/Library/Application Support would move
// every existing mailbox, and teamkit's users there run it from a terminal,
// where the XDG paths are the expected ones.
const osStateHomeVar = ""

// homeOfUser is the current user's home directory in /etc/passwd, "" when
// it has none there, or one that is not a directory of the user's own (a
// service account's /nonexistent, or /var/www, root's): where the state
// goes when HOME is not set (a system service, `env -i`), rather than
// somewhere every user can write.
func homeOfUser() string {
	data, err := os.ReadFile("/etc/passwd")
	if err != nil {
		return ""
	}
	uid := strconv.Itoa(os.Getuid())
	for line := range strings.Lines(string(data)) {
		f := strings.Split(strings.TrimRight(line, "\n"), ":")
		if len(f) >= 6 && f[2] == uid && filepath.IsAbs(f[5]) && ownDir(f[5]) {
			return f[5]
		}
	}
	return ""
}

// ownDir reports whether path is a directory (not a link) of this user's.
func ownDir(path string) bool {
	st, err := os.Lstat(path)
	if err != nil || !st.IsDir() {
		return false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && int(sys.Uid) == os.Getuid()
}

// privateTempState is the last place for the state: a directory of this
// user's own in the system's temporary directory, which every user can
// write to. The directory is made 0700, then checked: a directory (not a
// link), this user's, open to no one else. When another user made it
// first (to read the mailbox, or plant a type's script), a fresh private
// directory is made instead: safe, though the state it holds is not found
// again by the next command. It is chosen once a process, so that the
// mailbox, the run files and the types of one command stay together.
// With neither (a full temporary directory), it is a path under
// os.DevNull, which nothing can be made in: the command fails, saying so,
// rather than use a directory another user controls.
var privateTempState = sync.OnceValue(privateTempDir)

func privateTempDir() string {
	dir := filepath.Join(os.TempDir(), "teamkit-state-"+strconv.Itoa(os.Getuid()))
	os.Mkdir(dir, 0o700)
	if st, err := os.Lstat(dir); err == nil && st.Mode().Perm()&0o077 == 0 && ownDir(dir) {
		return dir
	}
	if d, err := os.MkdirTemp("", "teamkit-state-"+strconv.Itoa(os.Getuid())+"-"); err == nil {
		return d
	}
	return filepath.Join(os.DevNull, "no-private-state-directory-set-XDG_STATE_HOME")
}
