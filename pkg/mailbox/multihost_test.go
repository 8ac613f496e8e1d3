package mailbox_test

// Two "hosts" share one PostgreSQL team: separate processes with their own
// host id (TEAMKIT_HOST) and state directories, as on two machines.

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/teamkit/teamkit/internal/pgtest"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

// hostEnv is the environment of a process on host: the mailbox at db,
// its own host id, HOME and state directory under dir.
func hostEnv(db, host, dir string) []string {
	return append(procEnv(db), "TEAMKIT_HOST="+host,
		"HOME="+filepath.Join(dir, host, "home"), "XDG_STATE_HOME="+filepath.Join(dir, host, "state"))
}

// 8 drainers split across two hosts empty 10,000 messages while more
// arrive, with random SIGKILLs: every message is delivered, none twice
// except by a killed drain (a crash repeats, never loses), all end read.
func TestTwoHostsDrainExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns and kills hundreds of processes")
	}
	u := pgtest.URL(t)
	dir := t.TempDir()
	envs := [][]string{hostEnv(u, "hostA", dir), hostEnv(u, "hostB", dir)}
	crashedDrains(t, u, envs, crashLoad{seeded: 10000, drainers: 8, perSend: 100, kills: 40, limit: 50})
}

// The lock helper: when started by testLockDiesWithHolder, take the lock
// named in its environment, say so, and hold it until killed.
func TestLockHolderProcess(t *testing.T) {
	db := os.Getenv("TEAMKIT_TEST_LOCK_HOLDER")
	if db == "" {
		t.Skip("the lock holder of TestLockDiesWithHolder; runs only as its child")
	}
	m, err := mailbox.Open(context.Background(), db, mailbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := m.Lock("t", "w1.spawn")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := l.TryLock(); !ok || err != nil {
		t.Fatalf("TryLock = %v, %v", ok, err)
	}
	os.Stdout.WriteString("held\n")
	select {} // until SIGKILL
}

// A lock whose holder is SIGKILLed is free again: the kernel drops the
// file lock, the PostgreSQL server ends the session and its advisory lock.
func TestLockDiesWithHolder(t *testing.T) { eachBackend(t, testLockDiesWithHolder) }

func testLockDiesWithHolder(t *testing.T, be backend) {
	if testing.Short() {
		t.Skip("runs a process")
	}
	_, _, path := newDB(t, be)
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHolderProcess$")
	cmd.Env = append(os.Environ(), "TEAMKIT_TEST_LOCK_HOLDER="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "held" {
		t.Fatalf("holder said %q", line)
	}
	db := open(t, path, nil)
	l, _ := db.Lock("t", "w1.spawn")
	if ok, err := l.TryLock(); ok || err != nil {
		t.Fatalf("TryLock while another process holds it = %v, %v", ok, err)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ok, err := l.TryLock()
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			l.Unlock()
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the lock of a SIGKILLed holder was still held after 60 s")
		}
		time.Sleep(5 * time.Millisecond) // poll interval
	}
}
