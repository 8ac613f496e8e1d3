package spawn

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/teamkit/teamkit/pkg/launch"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/proc"
	"github.com/teamkit/teamkit/pkg/roster"
	"github.com/teamkit/teamkit/pkg/runstream"
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
	a, err := db.Agent(ctx, team, name)
	if err != nil {
		return a, err
	}
	if o.Run != "" && a.Run != o.Run {
		return a, fmt.Errorf("%w: %s/%s run %s (its latest run is %s)", ErrNotRunning, team, name, o.Run, a.Run)
	}
	got, errs := StopAll(ctx, db, []mailbox.Agent{a}, o)
	return got[0], errs[0]
}

// StopAll is Stop for every agent of agents (records of one team) at once
// (strays included, when o.RunsDir is set):
// SIGTERM to all their processes, found in one pass over /proc, then one
// grace for them all, SIGKILL to what remains, then one wait for the
// supervisors' exit records. 200 agents stop in about the grace, where
// one after another took 105 ms each beyond it. The results are in agents'
// order, with Stop's errors.
func StopAll(ctx context.Context, db *mailbox.DB, agents []mailbox.Agent, o StopOptions) ([]mailbox.Agent, []error) {
	if o.Grace <= 0 {
		o.Grace = launch.DefaultGrace
	}
	out := append([]mailbox.Agent(nil), agents...)
	errs := make([]error, len(agents))
	here, err := roster.At(ctx, db, o.Host)
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
		return out, errs
	}
	strays := stopStrays(agents, o)
	defer func() {
		for i, runs := range strays {
			if len(runs) > 0 && (errors.Is(errs[i], ErrNotRunning) || errors.Is(errs[i], ErrRemote)) {
				// The record is another host's run, or nothing live: what
				// this host stopped is the answer. A stray's supervisor
				// cannot record its exit (the record names another run), so
				// the code is unknown.
				s := agents[i]
				s.Run, s.Host, s.State, s.ExitCode = runs[len(runs)-1], o.Host, mailbox.StateExited, nil
				out[i], errs[i] = s, nil
			}
		}
	}()
	// Each stoppable agent's processes, and whether its supervisor was
	// just seen alive.
	var groups proc.Groups
	var which []int
	var sups []proc.Identity
	var orphans []int // no supervisor: anything with the marker is left unsupervised
	for i, a := range agents {
		ended := a.State == mailbox.StateExited || a.State == mailbox.StateFailed
		j := roster.Judge(a, here)
		switch {
		case a.State == mailbox.StateQueued:
			// Nothing runs yet: it leaves the queue, and its spec (the
			// spawner's environment) goes with it.
			ok, err := db.Dequeue(ctx, a.Team, a.Name, a.Run, mailbox.StateExited)
			switch {
			case err != nil:
				errs[i] = err
			case !ok:
				errs[i] = fmt.Errorf("%s/%s left the queue as it was stopped; stop it again", a.Team, a.Name)
			default:
				os.Remove(specOf(a.Log))
				out[i].State = mailbox.StateExited
			}
		case !j.Local && j.Live && !ended:
			errs[i] = fmt.Errorf("%w: %s/%s is %s; stop it there", ErrRemote, a.Team, a.Name, roster.Describe(&a, nil, here))
		case !j.Local:
			errs[i] = fmt.Errorf("%w: %s/%s is %s", ErrNotRunning, a.Team, a.Name, roster.Describe(&a, nil, here))
		case !j.Live || ended:
			// The supervisor is gone, or (its run's end recorded) on its
			// way out: it carries the run's marker too, and stops what its
			// agent left itself. Anything else still carrying the marker
			// is an agent left unsupervised (its guard was killed too):
			// found, stopped, and recorded.
			g := proc.Group{Marker: launch.Marker(a.Run)}
			if j.Live {
				g.Exclude = []int{a.PID}
			}
			groups = append(groups, g)
			which = append(which, i)
			sups = append(sups, proc.Identity{})
			orphans = append(orphans, len(groups)-1)
		default:
			// The supervisor was just seen alive, so its pid is still its
			// session's id (background and tmux supervisors lead one; in
			// the foreground no session carries the pid, and the marker
			// alone finds the agent).
			sup := roster.Identity(a)
			groups = append(groups, proc.Group{Marker: launch.Marker(a.Run), Session: sup.PID, Exclude: []int{sup.PID}})
			which = append(which, i)
			sups = append(sups, sup)
		}
	}
	if len(orphans) > 0 {
		members := groups.Members()
		for _, g := range orphans {
			if len(members[g]) == 0 {
				a := agents[which[g]]
				errs[which[g]] = fmt.Errorf("%w: %s/%s is %s", ErrNotRunning, a.Team, a.Name, roster.Describe(&a, nil, here))
				groups[g] = proc.Group{} // nothing to stop: matches no process
			}
		}
	}
	if len(groups) == 0 {
		return out, errs
	}
	// The supervisors see only signals: the record says who ended the run
	// (unless its stopper already said why, as a handshake timeout does).
	var stopping []mailbox.AgentRun
	for _, i := range which {
		if errs[i] == nil {
			stopping = append(stopping, mailbox.AgentRun{Team: agents[i].Team, Name: agents[i].Name, Run: agents[i].Run})
		}
	}
	// Not recorded (the mailbox locked or down), a run's record may end
	// as a crash while stop says stopped: each agent gets the error, not
	// status=stopped. The signals go all the same: stop is the emergency
	// stop, and the lock may be the agent's own (it can write the
	// mailbox), which refusing would leave it holding for ever.
	unrecorded := db.SetRunEnd(ctx, runstream.EndStopped, "stopped (spawn stop or --replace)", stopping...)
	groups.Stop(o.Grace)
	if unrecorded != nil {
		for _, i := range which {
			if errs[i] == nil {
				errs[i] = fmt.Errorf("%s/%s was stopped, but its stop could not be recorded (its run may show another end): %w",
					agents[i].Team, agents[i].Name, unrecorded)
			}
		}
		return out, errs
	}
	// The supervisors record the exit and leave once their agent is gone;
	// one that does not is stopped itself, by its exact identity.
	var live []proc.Identity
	for g, sup := range sups {
		i := which[g]
		if errs[i] != nil {
			continue
		}
		if !sup.Known() {
			if a := agents[i]; a.State != mailbox.StateExited {
				db.SetAgentState(ctx, a.Team, a.Name, a.Run, mailbox.StateExited, 0, nil)
			}
			continue
		}
		live = append(live, sup)
	}
	if left := proc.WaitAllGone(live, o.Grace+5*time.Second); len(left) > 0 {
		for _, sup := range left {
			sup.Signal(syscall.SIGTERM)
		}
		if left = proc.WaitAllGone(left, o.Grace); len(left) > 0 {
			for _, sup := range left {
				sup.Signal(syscall.SIGKILL)
			}
			proc.WaitAllGone(left, 5*time.Second)
		}
	}
	team := agents[0].Team
	runs := map[string]string{} // name → the run whose exit record is awaited
	for g, sup := range sups {
		if i := which[g]; errs[i] == nil && sup.Known() {
			runs[agents[i].Name] = agents[i].Run
		}
	}
	if len(runs) > 0 {
		db.Watch(ctx, team, time.Now().Add(5*time.Second), func() (bool, error) {
			now, err := db.AgentsWithoutTasks(ctx, team)
			if err != nil {
				return true, nil
			}
			for _, a := range now {
				if run, ok := runs[a.Name]; ok && a.Run == run && a.ExitCode == nil {
					return false, nil
				}
			}
			return true, nil
		})
	}
	now, err := db.Agents(ctx, team)
	byName := map[string]mailbox.Agent{}
	for _, a := range now {
		byName[a.Name] = a
	}
	for g := range groups {
		i := which[g]
		if errs[i] != nil {
			continue
		}
		a, ok := byName[agents[i].Name]
		switch {
		case err != nil:
			errs[i] = err
		case !ok:
			errs[i] = fmt.Errorf("agent %s/%s: %w", team, agents[i].Name, mailbox.ErrNotFound)
		default:
			out[i] = a
		}
	}
	return out, errs
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

// stopStrays stops, all at once, this host's strays (Strays) of each agent
// of agents, when o names the runs' directory and no one run: the runs
// stopped, by agent.
func stopStrays(agents []mailbox.Agent, o StopOptions) [][]string {
	out := make([][]string, len(agents))
	if o.Run != "" || o.RunsDir == "" {
		return out
	}
	var groups proc.Groups
	for i, a := range agents {
		out[i] = Strays(o.RunsDir, a)
		for _, run := range out[i] {
			groups = append(groups, proc.Group{Marker: launch.Marker(run)})
		}
	}
	if len(groups) > 0 {
		groups.Stop(o.Grace)
	}
	return out
}

// Strays are the runs of a's agent that this host started (their files are
// in runsDir) other than the one the record names, whose processes still
// run: a copy left behind when another host judged it lost (its heartbeats
// stopped reaching the database: a partition, a stopped supervisor) and
// launched a new one over its record. Only this host can stop it, and no
// record leads to it any more.
func Strays(runsDir string, a mailbox.Agent) []string {
	var out []string
	for _, run := range mailbox.Runs(runsDir, a.Team, a.Name) {
		if run != "" && run != a.Run && len(proc.Group{Marker: launch.Marker(run)}.Members()) > 0 {
			out = append(out, run)
		}
	}
	return out
}
