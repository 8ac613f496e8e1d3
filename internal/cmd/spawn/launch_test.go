package spawn_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/teamkit/teamkit/internal/cmd/inbox"
	"github.com/teamkit/teamkit/internal/cmd/ready"
	"github.com/teamkit/teamkit/internal/cmd/spawn"
	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/internal/command/commandtest"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/proc"
	spawnpkg "github.com/teamkit/teamkit/pkg/spawn"
)

// Spawns that launch run here in-process, with this test binary as the
// supervisor. testscript.RunMain installs copies of it named spawn, ready
// and inbox in a directory it puts first on PATH: spawn's own Executable
// finds its supervisor there (nothing named spawn sits beside a test
// binary), the supervisor and its guard are started with argv[0] "spawn",
// and an agent's ready and inbox resolve beside the supervisor, so each
// copy runs the real command.
func TestMain(m *testing.M) {
	mains := map[string]func() int{}
	for name, app := range map[string]command.App{"spawn": spawn.App, "ready": ready.App, "inbox": inbox.App} {
		mains[name] = func() int { return command.Main(app) }
	}
	os.Exit(testscript.RunMain(m, mains))
}

const team = "demo"

// launcher runs spawn against a mailbox, state directory and agent working
// directory of its own, with the types in testdata/types; every agent of
// the team is stopped when the test ends.
type launcher struct {
	*commandtest.Harness
	workdir string
}

func newLauncher(t *testing.T) *launcher {
	self, err := spawnpkg.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if bin := filepath.SplitList(os.Getenv("PATH"))[0]; filepath.Dir(self) != bin {
		t.Fatalf("spawn would start %s as each run's supervisor, not this test binary's copy in %s", self, bin)
	}
	types, err := filepath.Abs(filepath.Join("testdata", "types"))
	if err != nil {
		t.Fatal(err)
	}
	l := &launcher{commandtest.New(t, "spawn", spawn.App), t.TempDir()}
	l.Vars = map[string]string{"TEAMKIT_TYPES": types, "XDG_STATE_HOME": t.TempDir(), "XDG_CONFIG_HOME": t.TempDir(), "HOME": t.TempDir()}
	t.Cleanup(func() {
		if r := l.Run("stop", team, "--all", "--grace", "2s"); r.Code != 0 {
			t.Errorf("spawn stop %s --all: exit %d, stderr %q", team, r.Code, r.Stderr)
		}
	})
	return l
}

// spawn runs "spawn TYPE NAME --team demo --workdir W ARGS…", wants exit
// code and stdout matching the status line want, and returns its fields.
func (l *launcher) spawn(code int, want, typ, name string, args ...string) map[string]string {
	l.T.Helper()
	r := l.Run(append([]string{typ, name, "--team", team, "--workdir", l.workdir}, args...)...)
	if r.Code != code || !regexp.MustCompile(want).MatchString(r.Stdout) {
		l.T.Fatalf("spawn %s %s: exit %d, stdout %q, stderr %q; want %d and %s", typ, name, r.Code, r.Stdout, r.Stderr, code, want)
	}
	kv := map[string]string{"stderr": r.Stderr}
	for _, f := range strings.Fields(r.Stdout) {
		k, v, _ := strings.Cut(f, "=")
		kv[k] = v
	}
	return kv
}

// row is an agent as "spawn list --json" shows it (the fields checked here).
type row struct {
	Name, Type, Run, State, Detail string
	PID                            int
	ExitCode                       *int `json:"exit_code"`
	Unread                         int
}

// listed is the one agent "spawn list demo --json" shows.
func (l *launcher) listed() (a row) {
	l.T.Helper()
	out := l.Want(0, "list", team, "--json")
	if err := json.Unmarshal([]byte(out), &a); err != nil || strings.Count(out, "\n") != 1 {
		l.T.Fatalf("spawn list %s --json printed %q (%v); want one agent", team, out, err)
	}
	return a
}

// read returns the file the agent left in its working directory.
func (l *launcher) read(name string) string {
	l.T.Helper()
	b, err := os.ReadFile(filepath.Join(l.workdir, name))
	if err != nil {
		l.T.Fatal(err)
	}
	return string(b)
}

// identity is the live process pid names, remembered so that its end can
// be told from the pid's reuse.
func identity(t *testing.T, pid string) proc.Identity {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(pid))
	if err != nil {
		t.Fatalf("pid %q: %v", pid, err)
	}
	id, err := proc.Of(n)
	if err != nil || !id.Alive() {
		t.Fatalf("process %d is not running (%v)", n, err)
	}
	return id
}

const readyLine = `^status=ready after=\d+\.\ds agent=w1 team=demo type=holder run=\S+ pid=\d+ log=\S+\.log\n$`

// The field incident, in-process: a task queued before the agent exists
// and a briefing fed on stdin both reach the agent, byte for byte; spawn
// returns once the agent's own run has marked ready, and the run is
// recorded live, its task drained.
func TestSpawnWaitsForTheMark(t *testing.T) {
	l := newLauncher(t)
	const queued = "build the thing\n  (indented, with \"quotes\", $HOME and `ticks`)"
	if _, err := l.Store().Send(context.Background(), mailbox.Message{Team: team, From: "lead", To: "w1", Body: queued}); err != nil {
		t.Fatal(err)
	}
	const task = "paint the button — green, not \"blue\"\n\t$(not run) `nor this` \\ 'q'  \n"
	got := l.spawn(0, readyLine, "holder", "w1", "--task", task, "--timeout", "60s")

	briefing, err := os.ReadFile(strings.TrimSuffix(got["log"], ".log") + ".briefing.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(briefing), "## Your task\n\n"+task) {
		t.Errorf("the briefing does not hold the task byte for byte:\n%s", briefing)
	}
	if b := l.read("briefing.got"); b != string(briefing) {
		t.Errorf("the agent read on stdin\n%q\nnot its briefing\n%q", b, briefing)
	}
	if in := l.read("inbox.got"); !strings.Contains(in, " from=lead to=w1 ") || !strings.Contains(in, "\n"+queued+"\n") {
		t.Errorf("the agent's inbox drain printed %q; want the queued task %q", in, queued)
	}

	a := l.listed()
	if a.Name != "w1" || a.Type != "holder" || a.Run != got["run"] || a.State != "ready" || strconv.Itoa(a.PID) != got["pid"] || a.Unread != 0 {
		t.Errorf("spawn list shows %+v; want w1, ready, run %s, pid %s, nothing unread", a, got["run"], got["pid"])
	}
	identity(t, got["pid"])
}

// An agent that exits before it marks is reported at once, not at the
// timeout: its code, exit 2, and its last output on stderr.
func TestSpawnReportsAnEarlyExit(t *testing.T) {
	l := newLauncher(t)
	got := l.spawn(2, `^status=exited code=7 log=\S+\.log after=\S+ agent=w2 team=demo type=early run=\S+ pid=\d+ end=crashed\n$`,
		"early", "w2", "--timeout", "1h")
	for _, line := range []string{"spawn: agent output: starting\n", "spawn: agent output: no API key\n"} {
		if !strings.Contains(got["stderr"], line) {
			t.Errorf("stderr %q lacks %q", got["stderr"], line)
		}
	}
	if a := l.listed(); a.State != "exited" || a.ExitCode == nil || *a.ExitCode != 7 {
		t.Errorf("spawn list shows %+v; want exited with code 7", a)
	}
	// spawn log prints the run's output; --follow returns at once, the run
	// having ended.
	for _, args := range [][]string{{"log", team, "w2"}, {"log", team, "w2", "--follow"}} {
		if out := l.Want(0, args...); !strings.Contains(out, "starting\n") || !strings.Contains(out, "no API key\n") {
			t.Errorf("spawn %q printed %q; want the agent's output", args, out)
		}
	}
	if r := l.Run("log", team, "nobody"); r.Code != 1 || !strings.Contains(r.Stderr, "spawn list "+team+" shows the team's agents") {
		t.Errorf("spawn log of an agent never spawned: exit %d, stderr %q", r.Code, r.Stderr)
	}
}

// spawn stop ends every process of the run, the supervisor last, and
// returns once the run is recorded with the agent's own exit code.
func TestSpawnStopEndsTheRun(t *testing.T) {
	l := newLauncher(t)
	got := l.spawn(0, readyLine, "holder", "w1", "--timeout", "60s")
	supervisor, agent := identity(t, got["pid"]), identity(t, l.read("agent.pid"))

	out := l.Want(0, "stop", team, "w1")
	if want := "status=stopped agent=w1 team=demo run=" + got["run"] + " code=143\n"; out != want {
		t.Errorf("spawn stop printed %q, want %q", out, want)
	}
	for who, id := range map[string]proc.Identity{"supervisor": supervisor, "agent": agent} {
		if id.Alive() {
			t.Errorf("the %s (pid %d) still runs after spawn stop", who, id.PID)
		}
	}
	if a := l.listed(); a.Run != got["run"] || a.State != "exited" || a.ExitCode == nil || *a.ExitCode != 143 {
		t.Errorf("spawn list shows %+v; want run %s exited with code 143", a, got["run"])
	}
}
