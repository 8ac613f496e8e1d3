package launch

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/proc"
	"github.com/teamkit/teamkit/pkg/runstream"
)

// guardDetail is the detail of a run whose supervisor died;
// guardStoppedDetail of one whose supervisor, told to stop while it gave
// the answer back, left that to the guard.
const (
	guardDetail        = "its supervisor died; the guard stopped the run"
	guardStoppedDetail = "its supervisor was stopped while giving the answer back; the guard took the run over"
)

// GuardSpec is what a guard needs to clean up after a dead supervisor.
type GuardSpec struct {
	DB, Team, Name, Run, Log string
	Grace                    time.Duration
	Supervisor               proc.Identity
	// Ask is the ask whose answer the run carries (Spec.Ask).
	Ask int64 `json:",omitempty"`
	// Host is the host the run's slot is counted on (Spec.Host): once the
	// run's end is recorded, the guard admits the next launch queued there.
	Host string `json:",omitempty"`
	// Raw holds DB or Log when not UTF-8 (Spec.Raw).
	Raw map[string]string `json:",omitempty"`
}

func (g *GuardSpec) rawFields() map[string]*string {
	return map[string]*string{"db": &g.DB, "log": &g.Log}
}

// What a supervisor writes to its guard: started once its agent is up,
// done when it finished its work, stopped when it was told to stop while
// giving an answer back and leaves that to the guard.
const (
	guardStarted = "started\n"
	guardDone    = "done\n"
	guardStopped = "stopped\n"
)

// guard is a running guard as its supervisor holds it.
type guard struct {
	cmd *exec.Cmd
	w   *os.File
}

func (g *guard) pid() int {
	if g == nil {
		return 0
	}
	return g.cmd.Process.Pid
}

// started tells the guard the agent is up: from now on its answer, if it
// carries one, was delivered whatever happens to the supervisor.
func (g *guard) started() {
	if g != nil {
		io.WriteString(g.w, guardStarted)
	}
}

// handOver tells the guard the supervisor was stopped while giving an
// answer back: the guard does it once the supervisor is gone, as after a
// death, and records the run as stopped.
func (g *guard) handOver() {
	if g != nil {
		io.WriteString(g.w, guardStopped)
		handedOver.Lock()
		handedOver.pipes = append(handedOver.pipes, g.w)
		handedOver.Unlock()
	}
}

// handedOver keeps the pipe of a guard handed the give-back open until this
// process exits, as the guard takes the pipe's end for the supervisor's:
// left unreachable, the pipe would be closed by the garbage collector
// while the supervisor still ran. A resume supervises foreground runs side
// by side, and one Ctrl-C reaches them all.
var handedOver struct {
	sync.Mutex
	pipes []*os.File
}

// release tells the guard the supervisor finished, and reaps it.
func (g *guard) release() {
	if g == nil {
		return
	}
	io.WriteString(g.w, guardDone)
	g.w.Close()
	g.cmd.Wait()
}

// startGuard starts "self __guard" detached (see startDetached), with a pipe
// from this supervisor as its stdin. The pipe's write end exists only here:
// when the supervisor dies, however (SIGKILL included), the kernel closes it
// and the guard reads EOF without "done".
//
// The guard's spec goes over that pipe, never on its command line: anyone
// on the host reads a command line (ps, /proc/PID/cmdline), and the spec
// holds the mailbox URL with its password.
//
// The guard's TEAMKIT_RUN is empty (read as unset: no run's) and it has its
// own session, so it is never taken for one of the agent's processes, nor,
// once its supervisor dies and it is adopted by the supervisor of the run
// that started this one (a lead's, a subreaper), for one of that run's: an
// adopted orphan with no TEAMKIT_RUN at all is taken for the adopter's,
// and that run's end would stop the guard while it stops this run.
func startGuard(spec Spec, self proc.Identity) (*guard, error) {
	if spec.Self == "" {
		return nil, fmt.Errorf("the supervisor's executable is unknown")
	}
	g := GuardSpec{DB: spec.DB, Team: spec.Team, Name: spec.Name, Run: spec.Run, Log: spec.Log, Grace: spec.Grace, Supervisor: self, Ask: spec.Ask, Host: spec.Host}
	g.Raw = moveRaw(g.rawFields())
	gs, err := json.Marshal(g)
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	environ := spec.Environ
	if environ == nil {
		environ = os.Environ() // what a nil Env would have inherited
	}
	var env []string
	for _, kv := range environ {
		if !strings.HasPrefix(kv, "TEAMKIT_RUN=") {
			env = append(env, kv)
		}
	}
	env = append(env, "TEAMKIT_RUN=")
	cmd := &exec.Cmd{Path: spec.Self, Args: []string{"spawn", "__guard"}, Env: env, Stdin: r}
	cmd, err = startDetached(cmd)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("start the run's guard: %w", err)
	}
	// One line: json.Marshal escapes every newline inside the spec. Should
	// the supervisor die before the line is whole, its agent has not
	// started, and the guard has nothing to stop.
	if _, err := w.Write(append(gs, '\n')); err != nil {
		w.Close()
		cmd.Wait()
		return nil, fmt.Errorf("hand the run's guard its spec: %w", err)
	}
	return &guard{cmd: cmd, w: w}, nil
}

// Guard is the body of a guard process. Its stdin is the pipe from its
// supervisor, which first hands it its spec (one line of JSON), then writes
// "done" when it finishes, or closes without it when it dies. After a death
// the guard stops every process of the run (SIGTERM, then SIGKILL after the
// grace) and records the run as exited with an unknown code, so stale never
// reports a dead run as running, nor a running agent as unsupervised. A
// supervisor stopped while giving an answer back says "stopped" first: the
// guard does the same once it is gone, and records the run as stopped.
// With the end recorded, the run's slot is free: admit starts the launches
// queued on the run's host, as the supervisor would have (nil: none).
func Guard(stdin io.Reader, open func(ctx context.Context, path string) (*mailbox.DB, error), admit func(ctx context.Context, db *mailbox.DB, host string) error) error {
	// The terminal (a tmux pane closing) must not end the guard first.
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT)
	var gs GuardSpec
	in := bufio.NewReader(stdin)
	first, err := in.ReadBytes('\n')
	if err != nil || json.Unmarshal(first, &gs) != nil || restoreRaw(gs.Raw, gs.rawFields()) != nil || gs.Run == "" {
		// Without a run there is no marker: stopping "TEAMKIT_RUN=" could
		// only hit the wrong processes.
		return fmt.Errorf("no run spec from the supervisor on stdin")
	}
	started := false
	line, _ := in.ReadString('\n')
	if line == guardStarted {
		started = true
		line, _ = in.ReadString('\n')
	}
	if line == guardDone {
		return nil
	}
	why, end, detail := "died", runstream.EndCrashed, guardDetail
	// The supervisor is gone, and with it the session it led: only the
	// run's marker, never a session id that may be reused, finds them.
	group := proc.Group{Marker: Marker(gs.Run)}
	stopped := line == guardStopped
	if stopped {
		// Its give-back may still be under way: the guard takes over once
		// the supervisor has exited, as it would after a death. The pipe's
		// end comes as it exits; the supervisor, which carries the run's
		// marker, is never one of the run's processes to stop.
		io.Copy(io.Discard, in)
		gs.Supervisor.WaitGone(gs.Grace)
		group.Exclude = []int{gs.Supervisor.PID}
		why, end, detail = "was stopped while giving the answer back", runstream.EndStopped, guardStoppedDetail
	}
	spec := Spec{Log: gs.Log, Team: gs.Team, Name: gs.Name, Run: gs.Run, DB: gs.DB, Ask: gs.Ask}
	note(spec, "the supervisor (pid %d) of agent %s/%s run %s %s; stopping the run's processes", gs.Supervisor.PID, gs.Team, gs.Name, gs.Run, why)
	// A supervisor that died between its start record and "started" may
	// still have started the agent: its processes say so.
	started = started || len(group.Members()) > 0
	group.Stop(gs.Grace)
	patience := EndPatience
	giveBack := !started && gs.Ask > 0
	if giveBack {
		patience = GiveBackPatience // the answer is at stake, not only the record
	}
	ended := time.Now()
	// What cannot be recorded now is spooled, as a supervisor's end is,
	// for the next look on this host (RecordSpooled), with the answer to
	// give back first, should the outage outlast even its patience.
	spoolCrash := func(err error) error {
		if gs.Log != "" {
			s := spooled{CrashedAt: &ended, Stopped: stopped}
			if giveBack {
				s.Ask = gs.Ask
			}
			if serr := spool(SpoolPath(filepath.Dir(gs.Log), gs.Run), s); serr != nil {
				note(spec, "could not spool the run's end either: %v", serr)
			} else {
				note(spec, "the run's end spooled, to be recorded once the mailbox is back")
			}
		}
		return err
	}
	var db *mailbox.DB
	err = Retry(patience, func(ctx context.Context) (err error) {
		db, err = open(ctx, gs.DB)
		return err
	})
	if err != nil {
		note(spec, "could not record the run's end: %v", err)
		return spoolCrash(err)
	}
	defer db.Close()
	if !started {
		if err := unstart(db, spec); err != nil {
			return spoolCrash(err)
		}
	}
	// The run's record would otherwise say it runs for ever.
	errEnd := Retry(EndPatience, func(ctx context.Context) error {
		return db.SetRunEnd(ctx, end, detail, mailbox.AgentRun{Team: gs.Team, Name: gs.Name, Run: gs.Run})
	})
	errEnded := Retry(EndPatience, func(ctx context.Context) error { return db.SetRunEnded(ctx, gs.Team, gs.Run, ended) })
	if err := recordEnd(db, spec, nil); err != nil || errEnd != nil || errEnded != nil {
		return spoolCrash(errors.Join(err, errEnd, errEnded))
	}
	note(spec, "agent %s/%s run %s recorded as exited (code unknown: its supervisor %s)", gs.Team, gs.Name, gs.Run, why)
	if admit != nil {
		if err := Retry(EndPatience, func(ctx context.Context) error { return admit(ctx, db, gs.Host) }); err != nil {
			note(spec, "could not start the launches queued on this host: %v", err)
		}
	}
	return nil
}
