package spawn

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/teamkit/teamkit/pkg/launch"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/proc"
	"github.com/teamkit/teamkit/pkg/roster"
	"github.com/teamkit/teamkit/pkg/termsafe"
)

// Errors Stop reports.
var (
	ErrNotRunning = errors.New("agent is not running")
	ErrRemote     = errors.New("agent runs on another host")
)

// StopOptions tune Stop.
type StopOptions struct {
	// Host is this machine's name in agent records.
	Host string
	// Grace is how long the agent's processes get between SIGTERM and
	// SIGKILL (0: launch.DefaultGrace).
	Grace time.Duration
	// Run, when set, stops only that run (a timed-out spawn stops its own).
	Run string
	// RunsDir, when set, is where this host's runs of the mailbox keep
	// their files: copies of the agent this host started that the record
	// no longer names are found through it and stopped too (Strays).
	RunsDir string
}

// Stop ends the agent's latest run: SIGTERM to every process of the run
// (found by the run's marker and the supervisor's session, each checked
// through a pidfd), SIGKILL to what remains after the grace, then waits for
// the supervisor to record the agent's real exit code (143 after SIGTERM)
// and leave. Nothing is signalled unless the recorded supervisor's exact
// identity (pid, start time, boot id) is alive, or the processes carry the
// run's marker; a pid now held by another process is never touched.
//
// With RunsDir set, it first stops this host's strays (Strays), whatever
// the record says; when it stopped one and the record names nothing this
// host can stop, it returns the stray's run as stopped.
//
// It returns the record afterwards; ErrNotRunning when nothing of the run
// was running, ErrRemote for a run on another host (its processes can only
// be stopped there).
func Stop(ctx context.Context, db *mailbox.DB, team, name string, o StopOptions) (mailbox.Agent, error) {
	if o.Grace <= 0 {
		o.Grace = launch.DefaultGrace
	}
	a, err := db.Agent(ctx, team, name)
	if err != nil {
		return a, err
	}
	if o.Run != "" && a.Run != o.Run {
		return a, fmt.Errorf("%w: %s/%s run %s (its latest run is %s)", ErrNotRunning, team, name, o.Run, a.Run)
	}
	var strays []string
	if o.Run == "" && o.RunsDir != "" {
		strays = Strays(o.RunsDir, a)
		for _, run := range strays {
			proc.Group{Marker: launch.Marker(run)}.Stop(o.Grace)
		}
	}
	got, err := stopRecorded(ctx, db, a, o)
	if len(strays) > 0 && (errors.Is(err, ErrNotRunning) || errors.Is(err, ErrRemote)) {
		// The record is another host's run, or nothing live: what this
		// host stopped is the answer. A stray's supervisor cannot record
		// its exit (the record names another run), so the code is unknown.
		s := a
		s.Run, s.Host, s.State, s.ExitCode = strays[len(strays)-1], o.Host, mailbox.StateExited, nil
		return s, nil
	}
	return got, err
}

// Strays are the runs of a's agent that this host started (their files are
// in runsDir) other than the one the record names, whose processes still
// run: a copy left behind when another host judged it lost (its heartbeats
// stopped reaching the database: a partition, a stopped supervisor) and
// launched a new one over its record. Only this host can stop it, and no
// record leads to it any more.
func Strays(runsDir string, a mailbox.Agent) []string {
	var out []string
	for _, run := range Runs(runsDir, a.Team, a.Name) {
		if run != a.Run && len(proc.Group{Marker: launch.Marker(run)}.Members()) > 0 {
			out = append(out, run)
		}
	}
	return out
}

// stopRecorded is Stop of the run the record names.
func stopRecorded(ctx context.Context, db *mailbox.DB, a mailbox.Agent, o StopOptions) (mailbox.Agent, error) {
	team, name := a.Team, a.Name
	here, err := roster.At(ctx, db, o.Host)
	if err != nil {
		return a, err
	}
	ended := a.State == mailbox.StateExited || a.State == mailbox.StateFailed
	j := roster.Judge(a, here)
	if !j.Local {
		if j.Live && !ended {
			return a, fmt.Errorf("%w: %s/%s is %s; stop it there", ErrRemote, team, name, roster.Describe(&a, nil, here))
		}
		return a, fmt.Errorf("%w: %s/%s is %s", ErrNotRunning, team, name, roster.Describe(&a, nil, here))
	}
	sup := roster.Identity(a)
	if !j.Live || ended {
		// The supervisor is gone. Anything still carrying the run's marker
		// is an agent left unsupervised (its guard was killed too): found,
		// stopped, and recorded.
		left := proc.Group{Marker: launch.Marker(a.Run)}
		if len(left.Members()) == 0 {
			return a, fmt.Errorf("%w: %s/%s is %s", ErrNotRunning, team, name, roster.Describe(&a, nil, here))
		}
		left.Stop(o.Grace)
		if a.State != mailbox.StateExited {
			db.SetAgentState(ctx, team, name, a.Run, mailbox.StateExited, 0, nil)
		}
		return db.Agent(ctx, team, name)
	}
	// The supervisor was just seen alive, so its pid is still its session's
	// id (background and tmux supervisors lead one; in the foreground no
	// session carries the pid, and the marker alone finds the agent).
	proc.Group{Marker: launch.Marker(a.Run), Session: sup.PID, Exclude: []int{sup.PID}}.Stop(o.Grace)
	// The supervisor records the exit and leaves once its agent is gone;
	// one that does not is stopped itself, by its exact identity.
	if !sup.WaitGone(o.Grace + 5*time.Second) {
		sup.Signal(syscall.SIGTERM)
		if !sup.WaitGone(o.Grace) {
			sup.Signal(syscall.SIGKILL)
			sup.WaitGone(5 * time.Second)
		}
	}
	waitForExitRecord(ctx, db, team, name, a.Run)
	return db.Agent(ctx, team, name)
}

// LastOutput is the last n lines of the agent's output in its run log (the
// supervisor's own "teamkit:" notes left out), shown escaped
// (termsafe.Escape) even to a pipe: it is printed among spawn's own lines,
// usually to a terminal, and an agent's output may hold escape sequences.
func LastOutput(log string, n int) []string {
	data, err := launch.Tail(log, 64<<10)
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		if i := strings.LastIndexByte(line, '\r'); i >= 0 {
			line = line[i+1:] // a terminal shows what follows the last CR
		}
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "teamkit: ") {
			continue
		}
		out = append(out, termsafe.Escape(line))
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}
