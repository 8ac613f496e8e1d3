//go:build unix

package mailbox_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestDrainKilledBeforeOutputNeverLoses kills a drain that has claimed its
// batch but whose output has not been written (its stdout is a pipe already
// full, which nobody reads): nothing may be marked read, and every message
// comes back once the lease runs out. crashedDrains cannot see this window:
// a drain renders its batch and writes it in one write, so a kill at the
// first write comes after the whole batch was printed.
func TestDrainKilledBeforeOutputNeverLoses(t *testing.T) {
	const n = 20
	bin := inboxBinary(t)
	path := filepath.Join(t.TempDir(), "teamkit.db")
	want := seed(t, path, n)
	r := raw(t, path)

	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	// Fill the pipe: the drain's write then blocks before a byte lands.
	fd := int(pw.Fd())
	if err := syscall.SetNonblock(fd, true); err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{4096, 1} {
		chunk := bytes.Repeat([]byte{'#'}, size)
		for {
			if _, err := syscall.Write(fd, chunk); err != nil {
				if err == syscall.EAGAIN {
					break
				}
				t.Fatal(err)
			}
		}
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "drain", "crew", "w", "--json", "--lease", "2s")
	cmd.Env = procEnv(path)
	cmd.Stdout = pw
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	// Wait until the drain holds the batch: claimed (or, were it to mark
	// before writing, read).
	deadline := time.Now().Add(time.Minute)
	for count(t, r, `SELECT count(*) FROM messages WHERE claim_token IS NOT NULL OR read_at IS NOT NULL`) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the drain never claimed the %d messages: %s", n, stderr.String())
		}
		time.Sleep(10 * time.Millisecond) // poll interval
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if got := unread(t, path); got != n {
		t.Fatalf("a drain killed before its output was written left %d of %d messages unread: the rest are lost", got, n)
	}
	// The lease runs out and the next drain gets them all, once.
	seen := map[int64]int{}
	drainRest(t, bin, path, seen)
	for _, id := range want {
		if seen[id] != 1 {
			t.Fatalf("message %d delivered %d times after the kill, want once", id, seen[id])
		}
	}
}
