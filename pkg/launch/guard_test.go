package launch

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/proc"
)

// TestMain lets this test binary stand in for spawn: a supervisor started by
// a test starts it as "spawn __guard ...", as it starts the real binary.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "__guard" {
		os.Exit(guardVerb(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// guardVerb does what spawn's __guard verb does.
func guardVerb(args []string) int {
	if len(args) != 0 {
		fmt.Fprintln(os.Stderr, "usage: spawn __guard (the run's spec on stdin)")
		return 2
	}
	err := Guard(os.Stdin, func(ctx context.Context, path string) (*mailbox.DB, error) {
		return mailbox.Open(ctx, path, mailbox.Options{})
	}, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// guardedRun is a run whose mailbox is a SQLite file, recorded as running.
func guardedRun(t *testing.T, db string) Spec {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	spec := Spec{DB: db, Team: "t", Name: "w1", Run: fmt.Sprintf("guardtest%d", time.Now().UnixNano()),
		Log: filepath.Join(dir, "run.log"), Grace: time.Second, Self: self, Environ: os.Environ()}
	if !strings.Contains(db, "://") {
		m, err := mailbox.Open(context.Background(), db, mailbox.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		if err := m.RecordLaunch(context.Background(), mailbox.Agent{Team: spec.Team, Name: spec.Name, Run: spec.Run, State: mailbox.StateRunning}); err != nil {
			t.Fatal(err)
		}
	}
	return spec
}

// A command line is anyone's to read (ps, /proc/PID/cmdline): the guard's
// must not carry the mailbox URL, whose password the README keeps out of
// every output.
func TestGuardCommandLineHoldsNoSecret(t *testing.T) {
	const secret = "S3cretPWmarker"
	spec := guardedRun(t, "postgres://tk:"+secret+"@127.0.0.1:1/tk?sslmode=disable")
	g, err := startGuard(spec, proc.Identity{PID: os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", g.pid()))
	g.release()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{secret, spec.DB, spec.Log} {
		if bytes.Contains(cmdline, []byte(s)) {
			t.Errorf("the guard's command line %q holds %q", bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}), s)
		}
	}
	if !g.cmd.ProcessState.Success() {
		t.Errorf("a released guard ended with %v", g.cmd.ProcessState)
	}
}

// The guard learns its run from the supervisor over the pipe, and still
// tells a supervisor that finished from one that died.
func TestGuardSeesSupervisorFinishOrDie(t *testing.T) {
	db := filepath.Join(t.TempDir(), "team.db")
	for _, dies := range []bool{false, true} {
		spec := guardedRun(t, db)
		g, err := startGuard(spec, proc.Identity{PID: os.Getpid()})
		if err != nil {
			t.Fatal(err)
		}
		if dies {
			// What the kernel does to the write end when the supervisor dies.
			g.w.Close()
			g.cmd.Wait()
		} else {
			g.release()
		}
		if !g.cmd.ProcessState.Success() {
			t.Errorf("dies=%v: the guard ended with %v", dies, g.cmd.ProcessState)
		}
		m, err := mailbox.Open(context.Background(), db, mailbox.Options{})
		if err != nil {
			t.Fatal(err)
		}
		a, err := m.Agent(context.Background(), spec.Team, spec.Name)
		m.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := mailbox.StateRunning
		if dies {
			want = mailbox.StateExited
		}
		if a.Run != spec.Run || a.State != want || a.ExitCode != nil {
			t.Errorf("dies=%v: run %s state %s code %v; want run %s state %s, code unknown", dies, a.Run, a.State, a.ExitCode, spec.Run, want)
		}
		log, _ := os.ReadFile(spec.Log)
		if died := strings.Contains(string(log), "recorded as exited (code unknown: its supervisor died)"); died != dies {
			t.Errorf("dies=%v: the run's log says:\n%s", dies, log)
		}
	}
}

// A supervisor that dies before its guard has the spec has not started its
// agent: the guard, knowing no run, stops nothing and records nothing.
func TestGuardWithoutSpec(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, stdin := range []string{"", `{"Run":"r1"`, guardDone} {
		c := exec.Command(self, "__guard")
		c.Stdin = strings.NewReader(stdin)
		out, err := c.CombinedOutput()
		if c.ProcessState.ExitCode() != 1 || !strings.Contains(string(out), "no run spec from the supervisor") {
			t.Errorf("stdin %q: %v %s", stdin, err, out)
		}
	}
}
