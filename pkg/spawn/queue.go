package spawn

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/teamkit/teamkit/pkg/agenttype"
	"github.com/teamkit/teamkit/pkg/launch"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/proc"
	"github.com/teamkit/teamkit/pkg/roster"
)

// StatusQueued is a spawn that returned while its agent still waits for a
// slot under its host's cap (--no-wait, or --timeout passed in the queue):
// the launch is in the mailbox's queue and starts when its turn comes.
const StatusQueued = "queued"

// queueCheck is how often a spawn waiting in the queue runs Admit itself:
// the backstop for a slot freed by a run whose supervisor and guard both
// died (the guard of a dead supervisor admits, as the supervisor would).
const queueCheck = time.Second

// Admit starts the launches waiting on host, oldest first, while fewer
// agents than an entry's cap hold a slot there (roster.Holds): a spawn
// waiting in the queue calls it, and so does every run's supervisor as its
// agent ends (its guard, should the supervisor die). The mailbox takes
// them out of the queue (mailbox.DB.Admit, one transaction at a time per
// mailbox); a launch's supervisor is then started here, from the spec its
// spawn wrote (self is the spawn executable). A foreground launch has none
// (it runs on its spawn's terminal): it only has its slot taken, and its
// own spawn starts it.
func Admit(ctx context.Context, db *mailbox.DB, host, self string) error {
	// mailbox.DB.Admit reads the queue too; this first read spares the
	// clock's query (roster.At, a round trip on PostgreSQL) when nothing
	// waits, as for every run's end on an uncapped host.
	queue, err := db.Queue(ctx, host)
	if err != nil || len(queue) == 0 {
		return err
	}
	here, err := roster.At(ctx, db, host)
	if err != nil {
		return err
	}
	admitted, err := db.Admit(ctx, host, func(a mailbox.Agent) bool { return roster.Holds(a, here) })
	if err != nil {
		return err
	}
	var errs []error
	for _, q := range admitted {
		if err := startQueued(ctx, db, q, host, self); err != nil {
			errs = append(errs, fmt.Errorf("start queued %s/%s: %w", q.Team, q.Name, err))
		}
	}
	return errors.Join(errs...)
}

// specOf is the spec file beside a run's log (writeRun names both).
func specOf(log string) string { return strings.TrimSuffix(log, ".log") + ".spec.json" }

// startQueued starts the supervisor of admitted launch q from its spec, as
// the spawn that queued it would have (job.start), and records its pid.
func startQueued(ctx context.Context, db *mailbox.DB, q mailbox.Queued, host, self string) error {
	a, err := db.Agent(ctx, q.Team, q.Name)
	if err != nil || a.Run != q.Run {
		return err
	}
	specFile := specOf(a.Log)
	spec, err := launch.ReadSpec(specFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil // foreground: its spawn starts it
	}
	var pid int
	if err == nil {
		if spec.Tmux {
			// As job.start: tmux gets no agent identity in its environment.
			pid, err = launch.Tmux(ctx, self, specFile, q.Team, q.Name, AgentEnv(spec.Env, agenttype.Conf{}, nil))
		} else {
			pid, err = launch.Background(self, specFile, a.Log, spec.Env)
		}
	}
	if err != nil {
		os.Remove(specFile)
		db.SetAgentState(context.WithoutCancel(ctx), q.Team, q.Name, q.Run, mailbox.StateFailed, 0, nil)
		return err
	}
	sup, err := proc.Of(pid)
	if err != nil {
		sup = proc.Identity{PID: pid}
	}
	return db.SetAgentPID(ctx, q.Team, q.Name, q.Run, mailbox.Process{PID: sup.PID, Start: sup.Start, Boot: sup.Boot, Host: host})
}

// queue puts the job's launch in its host's queue, admits what fits, and
// waits for its own turn as req.Timeout allows (not at all with NoWait).
// It returns the launch's record once it left the queue: admitted (its
// supervisor's pid recorded, or, for a foreground launch, its slot taken
// for this spawn to start it), or cancelled (spawn stop); queued=true when
// it still waits.
func (j *job) queue(ctx context.Context, db *mailbox.DB) (a mailbox.Agent, queued bool, err error) {
	req := j.req
	// Enqueue clears the ready mark with the record, in one transaction:
	// not before (a launch recorded meanwhile keeps its mark), nor after
	// (an admitter may start the run, and its agent mark, at once).
	if err := db.Enqueue(ctx, j.agent(), req.MaxRunning, j.prev); err != nil {
		return a, false, j.relaunched(ctx, db, err)
	}
	j.recorded = true
	j.dropStaleSpecs()
	// The queue holds the run's files now: whoever admits it starts it
	// from them, whatever becomes of this spawn.
	j.launched = true
	// Interrupted (not crashed), wherever the interrupt finds this spawn
	// (its wait, or a look at the queue between waits): the spawn is
	// called off, and its launch leaves the queue with it. Dequeue takes
	// only a launch still queued, so one admitted meanwhile goes on.
	defer func() {
		if err == nil || ctx.Err() == nil {
			return
		}
		if ok, _ := db.Dequeue(context.WithoutCancel(ctx), req.Team, req.Name, j.run, mailbox.StateExited); ok {
			os.Remove(j.specFile)
		}
		err = ctx.Err()
	}()
	// The budget goes with the launch, as an uncapped spawn's (record):
	// every re-spawn keeps it.
	if err := db.SetBudget(ctx, req.Team, req.Name, j.run, j.budget); err != nil {
		return a, false, err
	}
	var deadline time.Time
	if req.Timeout > 0 {
		deadline = j.begun.Add(req.Timeout)
	}
	foreground := j.t.Conf.Launch == agenttype.LaunchForeground
	left := func() (bool, error) {
		if a, err = db.Agent(ctx, req.Team, req.Name); err != nil {
			return false, err
		}
		if a.Run != j.run {
			return false, fmt.Errorf("%s/%s: %w (run %s) while this spawn waited in the queue", req.Team, req.Name, ErrSuperseded, a.Run)
		}
		switch {
		case a.State == mailbox.StateQueued:
			return false, nil
		case a.State == mailbox.StateStarting && a.PID == 0:
			// Its admitter is starting it; one that died meanwhile left
			// it to be judged lost (watch then reports it exited). The
			// record's age by the database's clock, which stamped it
			// (PostgreSQL's, not this host's: hosts' clocks drift).
			if foreground {
				return true, nil
			}
			now, err := db.Now(ctx)
			return err == nil && now.Sub(a.UpdatedAt) > roster.StartingGrace, err
		}
		return true, nil
	}
	var waiting func()
	for {
		// A server restarting (mailbox.Disconnected) is ridden out, as Watch
		// below rides it out: the launch waits in the queue all the same,
		// and whoever admits it once the server is back starts it.
		if err := Admit(ctx, db, req.Host, req.Self); err != nil && ctx.Err() == nil && !mailbox.Disconnected(err) {
			return a, false, err
		}
		ok, err := left()
		if ok {
			return a, false, nil
		}
		if ctx.Err() != nil {
			return a, false, ctx.Err()
		}
		if err != nil && !mailbox.Disconnected(err) {
			return a, false, err
		}
		if req.NoWait || (!deadline.IsZero() && !time.Now().Before(deadline)) {
			if !foreground {
				return a, true, nil
			}
			// Only this spawn can start a foreground launch: left queued,
			// it would be admitted into a slot and never run. Called off.
			ok, err := db.Dequeue(context.WithoutCancel(ctx), req.Team, req.Name, j.run, mailbox.StateExited)
			if err != nil {
				return a, false, err
			}
			if ok {
				a.State, a.PID = mailbox.StateExited, 0
				return a, false, nil
			}
			continue // admitted meanwhile: the next look finds it
		}
		if waiting == nil && req.Queued != nil {
			waiting = req.Queued()
			defer waiting()
		}
		next := time.Now().Add(queueCheck)
		if !deadline.IsZero() && deadline.Before(next) {
			next = deadline
		}
		ok, err = db.Watch(ctx, req.Team, next, left)
		if ctx.Err() != nil {
			return a, false, ctx.Err()
		}
		if err != nil && !mailbox.Disconnected(err) {
			return a, false, err
		}
		if ok {
			return a, false, nil
		}
	}
}
