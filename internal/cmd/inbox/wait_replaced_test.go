//go:build !windows

package inbox_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/teamkit/teamkit/pkg/mailbox"
)

// A drain waiting on a SQLite mailbox whose file is removed (a reset: rm
// teamkit.db*) and made again by the next send must not wait on the old,
// unlinked file until its time is up and then say no message came, while
// one sits in the mailbox at its path: it gets the message, or fails
// (exit 1) saying the mailbox went away. Exit 2 is the wrong answer.
func TestWaitMailboxReplaced(t *testing.T) {
	h := newHarness(t)
	h.ok("send", "crew", "w", "before")
	h.ok("crew", "w")
	done := make(chan result, 1)
	go func() { done <- h.run("crew", "w", "--wait", "6s") }()
	waitOpen(t, h.DB) // the drain is waiting on the file
	for _, f := range []string{h.DB, h.DB + "-wal", h.DB + "-shm"} {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	// A new mailbox at the same path, and mail in it. Sent through the
	// store, not the command: two commands at once in one process share
	// urfave/cli's global flags.
	db, err := mailbox.Open(context.Background(), h.DB, mailbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Send(context.Background(), mailbox.Message{Team: "crew", From: "lead", To: "w", Body: "after the reset"}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	r := <-done
	switch {
	case r.Code == 0 && strings.Contains(r.Stdout, "after the reset"):
	case r.Code == 1:
	default:
		t.Fatalf("waiting drain: exit %d, stdout %q, stderr %q; but %s holds a message for crew/w: %q",
			r.Code, r.Stdout, r.Stderr, h.DB, h.ok("crew", "w", "--peek"))
	}
}

// waitOpen waits until this process (the in-process command) has path open,
// as /proc/self/fd shows, or lsof where there is no /proc (macOS, FreeBSD).
func waitOpen(t *testing.T, path string) {
	t.Helper()
	if p, err := filepath.EvalSymlinks(path); err == nil {
		path = p // as /proc and lsof name it (macOS: /private/var/…)
	}
	opened := openInProc
	if _, err := os.ReadDir("/proc/self/fd"); err != nil {
		lsof, err := exec.LookPath("lsof")
		if err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal("CI=true but there is neither /proc nor lsof to see the drain waiting on the mailbox file")
			}
			t.Skip("no /proc here to see the drain waiting on the mailbox file: install lsof to run this test")
		}
		opened = func(path string) bool {
			out, _ := exec.Command(lsof, "-n", "-P", "-Fn", "-p", strconv.Itoa(os.Getpid())).Output()
			return slices.Contains(strings.Split(string(out), "\n"), "n"+path)
		}
	}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if opened(path) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s was never opened", path)
}

// openInProc reports whether this process has path open, as /proc/self/fd
// shows.
func openInProc(path string) bool {
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, fd := range fds {
		if target, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && target == path {
			return true
		}
	}
	return false
}
