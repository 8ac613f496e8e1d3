package escalate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/text"
)

// Crash points of a resume pass: Resumer.Crash is called at each, so tests can
// kill a pass there (the test binary does, from TEAMKIT_TEST_CRASH).
const (
	CrashAfterIntent = "after-intent" // intent recorded, decision not yet
	CrashAfterDecide = "after-decide" // decision recorded, agent not yet re-spawned
	CrashAfterLaunch = "after-launch" // the launch's run recorded on the ask, not yet launched
	CrashAfterSpawn  = "after-spawn"  // agent re-spawned (its start recorded by its supervisor), the pass not yet settled
)

// PausedSetting is the team setting that pauses resume.
const PausedSetting = "resume.paused"

// DefaultParallel is how many agents a pass re-spawns at once when
// Resumer.Parallel is unset: a re-spawn mostly waits (for the agent's first
// turn and its ready mark, 143–187 s for codex), so a few at once make N
// answers cost about one boot instead of N, without starting a whole team's
// agents in the same second.
const DefaultParallel = 4

// MaxBackoff is the longest wait --watch backs off to after failed passes
// (unless the interval itself is longer).
const MaxBackoff = 10 * time.Minute

// Outcomes of Once that are not failures.
var (
	ErrLockHeld = errors.New("another resume of this team is running")
	ErrPaused   = errors.New("resume is paused for this team")
	// ErrAgentBusy is what a Spawner returns when the agent is still alive:
	// the re-spawn waits for a later pass, and the pass has not failed.
	ErrAgentBusy = errors.New("agent is still running")
	// ErrSuperseded is what a Spawner returns for a request whose IfRun
	// the agent's record no longer names: another launch replaced the run
	// the re-spawn was decided on, and there is nothing left to do.
	ErrSuperseded = errors.New("the agent was launched again meanwhile")
)

// FailedError says a pass failed for Count reasons, each already reported
// on one line. Channel of them were a channel's (an outage, a configuration
// error), which backs off on its own; the rest (a re-spawn that failed,
// say) make Watch back off.
type FailedError struct{ Count, Channel int }

func (e *FailedError) Error() string { return fmt.Sprintf("%d failure(s) in this pass", e.Count) }

// SpawnRequest is a re-spawn: the agent's recorded type, issue and workdir,
// and the folded task.
type SpawnRequest struct {
	Type, Team, Name string
	Task             string
	Issue            string
	Workdir          string
	// ResumeOf is recorded on the launch (ResumeKey), to say which resume
	// made it.
	ResumeOf string
	// Run is the launch id, recorded on the ask before the launch; the
	// run's supervisor records ask AskID's answer as delivered by it before
	// it starts the agent (mailbox.DB.StartRun), and starts nothing if it
	// cannot.
	Run   string
	AskID int64
	// Continue asks to continue the last run's CLI session (session.go).
	Continue *Continuation
	// Wake keeps the re-spawned agent a wake agent (see wake.go): every
	// re-spawn (a wake, a park's end, an answer) carries its last launch's.
	Wake bool
	// IfRun is the run a park's end or a wake was claimed on: checked
	// once the agent's spawn lock is held (a person's spawn takes it too),
	// the re-spawn is not made if the agent's record names another.
	IfRun string
}

// SpawnResult is how a re-spawn ended (see spawn.Result).
type SpawnResult struct {
	Status   string
	Run      string
	After    time.Duration
	ExitCode *int
	Log      string
}

// Spawner starts an agent again. It must refuse (not replace) a live agent.
type Spawner func(ctx context.Context, req SpawnRequest) (SpawnResult, error)

// Resumed is one agent started again with its answer.
type Resumed struct {
	AskID        int64   `json:"ask_id"`
	Team         string  `json:"team"`
	Agent        string  `json:"agent"`
	Issue        string  `json:"issue"`
	Kind         string  `json:"kind"`
	Decision     string  `json:"decision"`
	DecidedBy    string  `json:"decided_by"`
	Status       string  `json:"status"` // the spawn status, or "recovered" (launched by a pass that crashed)
	AfterSeconds float64 `json:"after_seconds"`
	Run          string  `json:"run"`
	ExitCode     *int    `json:"exit_code"`
	Log          string  `json:"log,omitempty"`
	// Parked is the run whose park this re-spawn ended (Kind KindPark; no
	// ask), "" for an answer's.
	Parked string `json:"parked_run,omitempty"`
}

// KindPark is the Kind of a re-spawn that ends a park.
const KindPark = "park"

// ParkKey is recorded as the ResumeOf of the launch that ends the park of
// run: a re-spawn by resume, whose failure counts toward failing.
func ParkKey(run string) string { return "park of run " + run }

// StatusRecovered is the status of a re-spawn found already launched by a
// pass that crashed before recording it.
const StatusRecovered = "recovered"

// Resumer runs resume passes for one team.
type Resumer struct {
	DB   *mailbox.DB
	Team string
	// Channels are read in order for each awaiting ask (Config.Channels);
	// the first that holds an answer gives it. Each fails alone: a channel
	// that fails is backed off (Watch) without holding up the others.
	Channels []Channel
	Spawn    Spawner
	// NewRun makes a launch id (spawn.NewRun).
	NewRun func() string
	// Parallel bounds the re-spawns a pass runs at once (DefaultParallel
	// when 0). Re-spawns of one agent still run one after another, in ask
	// order.
	Parallel int
	// Report is called once per resumed agent, ReportWake once per agent
	// woken by mail.
	Report     func(Resumed) error
	ReportWake func(Woke) error
	// Host is this host (roster.HostName): only its agents are woken by
	// mail.
	Host string
	// Stderr receives one line per failure, and notes.
	Stderr io.Writer
	// Prefix starts every stderr line ("resume").
	Prefix string
	// Crash is called at each crash point; tests make it kill the process.
	Crash func(point string)
	// Now is the clock a channel's backoff is kept by (default time.Now).
	Now func() time.Time
	// Sleep waits between --watch passes (default: a timer that ends
	// early with ctx).
	Sleep func(ctx context.Context, d time.Duration) error
	// Wake ends Watch's wait early: the Slack listener's doorbell rings it
	// when something changed on an awaiting ask's message, so a ✅ is read
	// now, not an interval later.
	Wake <-chan struct{}

	// health is each channel's, across passes (see health.go).
	health map[string]*health
	// watching: Watch runs the passes, so health changes are said, and
	// interval is its base interval, where a channel's backoff starts.
	watching bool
	interval time.Duration
	// mu keeps the lines of concurrent re-spawns whole on Stderr.
	mu sync.Mutex
}

// Pause and Unpause set the team's kill-switch.
func Pause(ctx context.Context, db *mailbox.DB, team string, now time.Time) error {
	return db.SetSetting(ctx, team, PausedSetting, now.UTC().Format(time.RFC3339))
}

// Unpause clears the kill-switch.
func Unpause(ctx context.Context, db *mailbox.DB, team string) error {
	return db.SetSetting(ctx, team, PausedSetting, "")
}

// Paused reports whether resume is paused for team.
func Paused(ctx context.Context, db *mailbox.DB, team string) (bool, error) {
	_, ok, err := db.Setting(ctx, team, PausedSetting)
	return ok, err
}

// Once is one pass as the command runs it: nothing while paused
// (ErrPaused), nothing while another pass holds the lock (ErrLockHeld),
// else Pass.
func (r *Resumer) Once(ctx context.Context) error {
	paused, err := Paused(ctx, r.DB, r.Team)
	if err != nil {
		return err
	}
	if paused {
		return ErrPaused
	}
	unlock, err := r.lock()
	if err != nil {
		return err
	}
	defer unlock()
	// The switch may have been thrown while this pass waited for nothing
	// but the lock; look again now that the pass is ours.
	if paused, err := Paused(ctx, r.DB, r.Team); err != nil || paused {
		if err == nil {
			err = ErrPaused
		}
		return err
	}
	return r.Pass(ctx)
}

// LockKey names the file lock (mailbox.DB.Lock) that keeps one resume per
// team at a time.
const LockKey = "resume"

func (r *Resumer) lock() (func(), error) {
	l, err := r.DB.Lock(r.Team, LockKey)
	if err != nil {
		return nil, err
	}
	ok, err := l.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock resume of team %s: %w", r.Team, err)
	}
	if !ok {
		return nil, ErrLockHeld
	}
	return func() { l.Unlock() }, nil
}

func (r *Resumer) note(format string, args ...any) {
	prefix := r.Prefix
	if prefix == "" {
		prefix = "resume"
	}
	line := fmt.Sprintf("%s: %s\n", prefix, fmt.Sprintf(format, args...))
	r.mu.Lock()
	defer r.mu.Unlock()
	io.WriteString(r.Stderr, line)
}

func (r *Resumer) crash(point string) {
	if r.Crash != nil {
		r.Crash(point)
	}
}

// pass is the state of one pass.
type pass struct {
	r        *Resumer
	ctx      context.Context
	failures int
	// chans is how each channel fared in this pass (see health.go).
	chans map[string]*round
	// resolved are the asks whose intents a crashed pass left, settled
	// by this one; started, the asks it re-spawns. Both under mu.
	resolved, started map[int64]bool

	// The re-spawns under way (see start): slots bounds them, in the
	// order they were taken up; last[agent] is closed when that agent's
	// latest queued re-spawn is done; and err is the first database error
	// one of them returned, which ends the pass. mu guards failures, err,
	// last and Report.
	mu    sync.Mutex
	wg    sync.WaitGroup
	slots *slots
	last  map[string]chan struct{}
	err   error
	// panicked holds a panic of a re-spawn (a test's crash hook), which
	// Pass raises again in its caller's goroutine once the others end.
	panicked any
}

// count counts one failure of the pass.
func (p *pass) count() {
	p.mu.Lock()
	p.failures++
	p.mu.Unlock()
}

func (p *pass) fail(a mailbox.Ask, err error) {
	p.count()
	where := "local"
	if a.Issue != "" {
		where = a.Issue
	}
	p.r.note("error: ask %d (%s/%s, %s): %s", a.ID, a.Team, a.Agent, where, text.OneLine(err.Error()))
}

// Pass is one resume pass over the team's asks, without lock or pause
// checks (Once adds them):
//
//  1. resolve the intents a crashed pass left: decided but not delivered →
//     re-spawn (a launch of the crashed pass not yet started is withdrawn by
//     the new one); delivered → report it as recovered; never decided →
//     clear;
//  2. re-spawn asks answered but not resumed (answers given with ask answer);
//  3. wake the wake agents with mail waiting (wake.go);
//  4. for each awaiting ask, read each channel that holds it (Channel.Find)
//     until one gives the answer, record it (intent, then a compare-and-set
//     from awaiting) and re-spawn the agent. A channel that cannot be used
//     this pass (down, misconfigured, backing off) is skipped alone.
//
// Every failure is reported on one line and leaves its ask awaiting, or
// answered with the answer pending; the pass carries on with the next ask
// and ends with a *FailedError. The delivery of an answer is the state
// machine of mailbox.DB.LaunchAnswer and StartRun (docs/DESIGN.md).
func (r *Resumer) Pass(ctx context.Context) error {
	p := newPass(r, ctx)
	return p.finish(p.run())
}

func newPass(r *Resumer, ctx context.Context) *pass {
	n := r.Parallel
	if n <= 0 {
		n = DefaultParallel
	}
	return &pass{r: r, ctx: ctx, chans: map[string]*round{}, started: map[int64]bool{},
		slots: newSlots(n), last: map[string]chan struct{}{}}
}

// finish waits for every re-spawn the pass started, whatever ended it
// (err): none outlives the pass, whose lock is released only after. It
// returns err, else the first database error of a re-spawn, else a
// *FailedError when anything failed.
func (p *pass) finish(err error) error {
	p.wg.Wait()
	if p.panicked != nil {
		panic(p.panicked)
	}
	if err == nil {
		err = p.err
	}
	if err != nil {
		return err
	}
	channel := p.settleHealth()
	if p.failures > 0 {
		return &FailedError{Count: p.failures, Channel: channel}
	}
	return nil
}

// peopleError is a ReadPeople failure: what it means for the pass, with
// the list's own error (and its hint) underneath.
type peopleError struct {
	msg string
	err error
}

func (e *peopleError) Error() string { return e.msg }
func (e *peopleError) Unwrap() error { return e.err }

// run is the pass up to its last re-spawn started (Pass waits for them).
func (p *pass) run() error {
	r, ctx := p.r, p.ctx
	for _, ch := range r.Channels {
		if pr, ok := ch.(PeopleReader); ok {
			if err := pr.ReadPeople(); err != nil {
				p.count()
				r.note("error: %v", err)
				var h interface{ Hint() string }
				if errors.As(err, &h) && h.Hint() != "" {
					r.note("hint: %s", h.Hint())
				}
			}
		}
	}
	done := map[int64]bool{}
	intents, err := r.DB.ResumeIntents(ctx, r.Team)
	if err != nil {
		return err
	}
	for _, in := range intents {
		a, err := r.DB.Ask(ctx, in.AskID)
		if err != nil {
			return err
		}
		done[a.ID] = true
		if a.State == mailbox.AskAwaiting {
			if err := r.DB.ClearResumeIntent(ctx, a.ID); err != nil {
				return err
			}
			continue
		}
		if a.ResumedRun != "" {
			// Delivered by a run of a pass that crashed before it settled.
			if err := p.recovered(a); err != nil {
				return err
			}
			continue
		}
		if err := p.start(a, in); err != nil {
			return err
		}
	}

	p.mu.Lock()
	p.resolved = done
	p.mu.Unlock()
	if err := p.deliver(); err != nil {
		return err
	}
	if err := p.unpark(); err != nil {
		return err
	}
	if err := p.wake(); err != nil {
		return err
	}
	awaiting, err := r.DB.Asks(ctx, r.Team, mailbox.AskAwaiting)
	if err != nil {
		return err
	}
	if err := p.postBudgetAsks(awaiting); err != nil {
		return err
	}
	return p.read(awaiting)
}

// deliver re-spawns the asks answered but not resumed (answers given with
// ask answer, or claimed by a channel) that this pass has not started yet.
func (p *pass) deliver() error {
	answered, err := p.r.DB.Asks(p.ctx, p.r.Team, mailbox.AskAnswered)
	if err != nil {
		return err
	}
	for _, a := range answered {
		p.mu.Lock()
		skip := p.resolved[a.ID] || p.started[a.ID]
		p.mu.Unlock()
		if a.ResumedRun != "" || skip {
			continue
		}
		in, ok, err := p.intent(a.ID)
		if err != nil {
			return err
		}
		if !ok {
			continue // delivered meanwhile by this pass
		}
		p.r.crash(CrashAfterIntent)
		if err := p.start(a, in); err != nil {
			return err
		}
	}
	return nil
}

// read reads the awaiting asks on every channel at once, one goroutine per
// channel taking its asks in order, so a slow or failing channel (GitHub
// retrying a 503 for seconds per request) holds up no other. Under a
// watch, the answers given meanwhile (ask answer) are delivered every
// interval while the channels are read, so that no channel delays them
// either. It returns the first mailbox error.
func (p *pass) read(awaiting []mailbox.Ask) error {
	var wg sync.WaitGroup
	errs := make([]error, len(p.r.Channels))
	for i, ch := range p.r.Channels {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer p.recoverInto(&errs[i])
			errs[i] = p.readChannel(ch, awaiting)
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var derr error
	if p.r.watching && p.r.interval > 0 {
		tick := time.NewTicker(p.r.interval)
		defer tick.Stop()
	wait:
		for {
			select {
			case <-done:
				break wait
			case <-tick.C:
				if derr == nil && p.ctx.Err() == nil {
					derr = p.deliver()
				}
			}
		}
	}
	<-done
	// A channel reader that stops on the pass's error (p.failed) returns
	// that one error too: each is said once, not once per channel.
	var out []error
	seen := map[string]bool{}
	for _, err := range append([]error{derr}, errs...) {
		if err != nil && !seen[err.Error()] {
			seen[err.Error()] = true
			out = append(out, err)
		}
	}
	return errors.Join(out...)
}

// readChannel reads ch's awaiting asks in order and claims the answers.
func (p *pass) readChannel(ch Channel, awaiting []mailbox.Ask) error {
	for _, a := range awaiting {
		if err := p.failed(); err != nil {
			return err
		}
		p.mu.Lock()
		claimed := p.started[a.ID]
		p.mu.Unlock()
		if claimed || !ch.Holds(a) {
			continue
		}
		dec, found, err := p.find(ch, a)
		if err == nil && found {
			err = p.claim(a, dec)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// recoverInto keeps a panic of a channel's reader (a test's crash hook)
// for Pass to raise again in its caller's goroutine.
func (p *pass) recoverInto(err *error) {
	if v := recover(); v != nil {
		p.mu.Lock()
		if p.panicked == nil {
			p.panicked = v
		}
		p.mu.Unlock()
		*err = fmt.Errorf("a channel's reader panicked: %v", v)
	}
}

// start re-spawns the agent of answered ask a in the background, at most
// Resumer.Parallel at once, after any re-spawn of the same agent queued
// before it in this pass. A re-spawn waits for its agent's handshake (up
// to minutes for a real AI), and the agents of a team are independent, so
// N answers take about one boot instead of N. Exactly-once is unchanged:
// the ask was claimed (compare-and-set, intent) before start, and each ask
// is started at most once a pass. It returns the first database error of
// an earlier re-spawn, which ends the pass.
func (p *pass) start(a mailbox.Ask, in mailbox.ResumeIntent) error {
	p.mu.Lock()
	if p.err != nil {
		p.mu.Unlock()
		return p.err
	}
	if p.started[a.ID] {
		// Claimed by a channel and found answered by deliver at once.
		p.mu.Unlock()
		return nil
	}
	p.started[a.ID] = true
	p.goLocked(a.Team, a.Agent, func() error { return p.respawn(a, in) }, nil)
	return nil
}

// goLocked runs fn (a re-spawn of agent) in the background as start says,
// or skipped (when not nil) instead if the pass is ending by then; p.mu is
// held on entry and released.
func (p *pass) goLocked(team, agent string, fn, skipped func() error) {
	prev := p.last[agent]
	done := make(chan struct{})
	p.last[agent] = done
	// In line for a slot now, in the order the pass takes re-spawns up;
	// one behind its agent's previous re-spawn, once that is done.
	var turn <-chan struct{}
	if prev == nil {
		turn = p.slots.ask()
	}
	p.mu.Unlock()

	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer close(done)
		defer func() {
			if v := recover(); v != nil {
				p.mu.Lock()
				if p.panicked == nil {
					p.panicked = v
				}
				if p.err == nil {
					p.err = fmt.Errorf("re-spawn of %s/%s panicked: %v", team, agent, v)
				}
				p.mu.Unlock()
			}
		}()
		if prev != nil {
			<-prev
			turn = p.slots.ask()
		}
		<-turn
		defer p.slots.release()
		if p.failed() != nil {
			if skipped == nil {
				return // the pass is ending: leave the intent for the next
			}
			fn = skipped
		}
		if err := fn(); err != nil {
			p.mu.Lock()
			if p.err == nil {
				p.err = err
			}
			p.mu.Unlock()
		}
	}()
}

// failed is the first database error of a re-spawn of this pass.
func (p *pass) failed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// intent inserts ask id's resume intent if absent, while its answer is
// still to be delivered, and returns it; ok is false when the answer was
// delivered (and settled) meanwhile, and there is nothing left to do.
func (p *pass) intent(id int64) (mailbox.ResumeIntent, bool, error) {
	if err := p.r.DB.AddDeliveryIntent(p.ctx, id); err != nil {
		return mailbox.ResumeIntent{}, false, err
	}
	in, ok, err := p.r.DB.ResumeIntent(p.ctx, id)
	if err != nil || ok {
		return in, ok, err
	}
	a, err := p.r.DB.Ask(p.ctx, id)
	if err == nil && a.ResumedRun == "" {
		err = fmt.Errorf("resume intent of ask %d vanished as it was written", id)
	}
	return in, false, err
}

// claim records the answer and re-spawns the agent: the intent first (only
// while the ask awaits: a claim that comes after another's decision adds
// none), then the compare-and-set from awaiting. Only the pass whose
// compare-and-set wins goes on; a loser leaves everything to the winner
// (whose intent, if it crashes, the next pass resolves).
func (p *pass) claim(a mailbox.Ask, dec mailbox.Decision) error {
	db, ctx := p.r.DB, p.ctx
	if err := db.AddAnswerIntent(ctx, a.ID); err != nil {
		return err
	}
	p.r.crash(CrashAfterIntent)
	won, err := db.DecideAsk(ctx, a.ID, dec)
	if err != nil || !won {
		return err
	}
	p.r.crash(CrashAfterDecide)
	// Read back what was stored: the fold uses the record, never the
	// comment in hand.
	if a, err = db.Ask(ctx, a.ID); err != nil {
		return err
	}
	in, ok, err := p.intent(a.ID)
	if err != nil || !ok {
		return err
	}
	return p.start(a, in)
}

// respawn starts the agent of answered ask a again with the folded task,
// through the delivery state machine: the launch's run is recorded on the
// ask first (which withdraws any earlier launch not yet started), the run's
// supervisor records the answer delivered before it starts the agent, and
// the ask, not what Spawn reports, says afterwards whether it did. A launch
// that did not start is withdrawn, so it never starts later, and the answer
// stays for the next pass; the intent is cleared either way.
func (p *pass) respawn(a mailbox.Ask, in mailbox.ResumeIntent) error {
	db, ctx := p.r.DB, p.ctx
	ag, err := db.Agent(ctx, a.Team, a.Agent)
	if err != nil && !errors.Is(err, mailbox.ErrNotFound) {
		return err
	}
	if err != nil {
		return p.respawnFailed(a, fmt.Errorf("agent %s/%s %w", a.Team, a.Agent, ErrAgentNeverLaunch))
	}
	if a.BudgetRun != "" && a.Decision == mailbox.DecisionRejected {
		return p.budgetRejected(a)
	}
	if budgetSuperseded(a, ag) {
		return p.settleSuperseded(a, ag)
	}
	clock, err := db.Now(ctx)
	if err != nil {
		return err
	}
	free, why, err := p.respawnable(ag, a, clock)
	if err != nil {
		return err
	}
	if !free {
		// A park or a crash loop holds the answer too: it is delivered by
		// the pass after the park ends, or after a person's spawn. A launch
		// a crashed pass left for it is withdrawn like any given back.
		if ok, err := p.giveBack(a); err != nil || !ok {
			return err
		}
		p.r.note("ask %d: %s; the answer waits", a.ID, why)
		return nil
	}
	run := p.r.NewRun()
	ok, err := db.LaunchAnswer(ctx, a.ID, run)
	if err != nil {
		return err
	}
	if !ok {
		// Delivered meanwhile by a launch of a crashed pass.
		return p.reread(a)
	}
	p.r.crash(CrashAfterLaunch)
	cont, err := p.continuation(ag, Fold("", a, in.CreatedAt))
	if err != nil {
		return err
	}
	res, err := p.r.Spawn(ctx, SpawnRequest{Continue: cont,
		Type: ag.Type, Team: a.Team, Name: a.Agent, Task: Fold(ag.Task, a, in.CreatedAt), Issue: ag.Issue, Workdir: ag.Workdir,
		ResumeOf: ResumeKey(a.ID, in.CreatedAt), Run: run, AskID: a.ID, Wake: ag.Wake == mailbox.WakeMail,
	})
	if err != nil && ctx.Err() != nil {
		// Interrupted: the intent stays, and the next pass resolves it.
		return ctx.Err()
	}
	now, rerr := db.Ask(context.WithoutCancel(ctx), a.ID)
	if rerr != nil {
		return rerr // the launch stays recorded; the next pass resolves it
	}
	if now.ResumedRun != "" {
		p.r.crash(CrashAfterSpawn)
		// The answer went with the run spawn reports: run, or the run it
		// launched instead when run's session was gone (spawn.fallBack).
		if err != nil || now.ResumedRun != res.Run {
			// Spawn failed after the agent started (a database error while
			// it waited for the mark): the answer was delivered all the
			// same, and must not be delivered again.
			if err != nil {
				p.r.note("warning: re-spawn of %s/%s reported %s, but run %s was started with the answer", a.Team, a.Agent, text.OneLine(err.Error()), now.ResumedRun)
			} else {
				p.r.note("warning: re-spawn of %s/%s reported run %q (%s), but run %s was started with the answer", a.Team, a.Agent, res.Run, res.Status, now.ResumedRun)
			}
			return p.recovered(now)
		}
		return p.settle(now, Resumed{Status: res.Status, Run: res.Run, AfterSeconds: res.After.Seconds(), ExitCode: res.ExitCode, Log: res.Log})
	}
	if err == nil {
		err = fmt.Errorf("run %s ended (%s) before its agent started; see %s", run, res.Status, res.Log)
	}
	if errors.Is(err, ErrAgentBusy) || errors.Is(err, ErrSuperseded) {
		// Running, or launched by another spawn meanwhile (which it may
		// still be starting): the answer waits for that run to end.
		return p.respawnDeferred(now, err)
	}
	return p.respawnFailed(now, fmt.Errorf("re-spawn %s/%s: %w", a.Team, a.Agent, err))
}

// reread settles ask a as it now stands: delivered (by a launch this pass
// did not see start) is reported as recovered; anything else only loses
// its intent, and the next pass looks again.
func (p *pass) reread(a mailbox.Ask) error {
	db, ctx := p.r.DB, context.WithoutCancel(p.ctx)
	now, err := db.Ask(ctx, a.ID)
	if err != nil {
		return err
	}
	if now.ResumedRun != "" {
		return p.recovered(now)
	}
	return db.ClearResumeIntent(ctx, a.ID)
}

// recovered settles delivered ask a whose delivery this pass did not
// launch or did not see succeed, with the record of the run that carried it.
func (p *pass) recovered(a mailbox.Ask) error {
	res := Resumed{Status: StatusRecovered, Run: a.ResumedRun}
	ag, err := p.r.DB.Agent(context.WithoutCancel(p.ctx), a.Team, a.Agent)
	if err != nil && !errors.Is(err, mailbox.ErrNotFound) {
		return err
	}
	if err == nil && ag.Run == a.ResumedRun {
		res.Log = ag.Log
	}
	return p.settle(a, res)
}

// giveBack leaves ask a's answer pending for a later pass: the launch is
// withdrawn (a supervisor still on its way then starts nothing) and the
// intent cleared. It reports false when the launch had started after all,
// and then settles the ask as recovered instead.
func (p *pass) giveBack(a mailbox.Ask) (bool, error) {
	db, ctx := p.r.DB, context.WithoutCancel(p.ctx)
	ok, err := db.WithdrawLaunch(ctx, a.ID)
	if err != nil {
		return false, err
	}
	if !ok {
		return false, p.reread(a)
	}
	return true, db.ClearResumeIntent(ctx, a.ID)
}

// respawnDeferred leaves the answer for a later pass because the agent is
// still running (it has not exited since it asked, or it is busy with an
// earlier answer). Nothing failed: the pass says so and carries on.
func (p *pass) respawnDeferred(a mailbox.Ask, cause error) error {
	if ok, err := p.giveBack(a); err != nil || !ok {
		return err
	}
	p.r.note("ask %d: %s; a later pass re-spawns %s/%s with the answer once it has exited", a.ID, text.OneLine(cause.Error()), a.Team, a.Agent)
	return nil
}

// respawnFailed gives the ask back and counts the failure.
func (p *pass) respawnFailed(a mailbox.Ask, cause error) error {
	if ok, err := p.giveBack(a); err != nil || !ok {
		return err
	}
	p.fail(a, fmt.Errorf("%w; the answer is kept and the next pass retries", cause))
	return nil
}

// settle clears what is left of delivered ask a (its Slack events and
// intent; its supervisor recorded the run that carried the answer) and
// reports the resumed agent.
func (p *pass) settle(a mailbox.Ask, res Resumed) error {
	db, ctx := p.r.DB, context.WithoutCancel(p.ctx)
	if err := db.ClearSlackEvents(ctx, a.ID); err != nil {
		return err
	}
	if err := db.ClearResumeIntent(ctx, a.ID); err != nil {
		return err
	}
	res.AskID, res.Team, res.Agent, res.Issue, res.Kind = a.ID, a.Team, a.Agent, a.Issue, a.Kind
	res.Decision, res.DecidedBy = a.Decision, a.DecidedBy
	if res.Status == "exited" || res.Status == "timeout" {
		p.r.note("warning: agent %s/%s was re-spawned with the answer to ask %d but is not ready (status=%s, log %s)",
			a.Team, a.Agent, a.ID, res.Status, res.Log)
	}
	if p.r.Report != nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.r.Report(res)
	}
	return nil
}
