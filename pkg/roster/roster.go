// Package roster is a team at a glance: for each agent, whether it is
// running, ready, exited (and how), lost, or waiting for a human, how much
// unread work sits in its inbox and since when, and its open question. It is
// the one answer to "is the worker slow or dead?": stale's recipient column,
// spawn list and anything else that asks call State, and State alone decides
// liveness (through Judge).
//
// Liveness is judged from a point of view, Here: this host, now. On the host
// that recorded a run the answer is exact: the supervisor's recorded identity
// (pid, start time, boot id) must still name a live process; a pid alone is
// never trusted, since the kernel reuses it. On any other host a pid means
// nothing, so the answer is the age of the heartbeat the supervisor renews:
// fresh is running (host=H), stale is lost (the host or the supervisor died
// without recording an exit). The age is measured on the database's clock,
// which also stamps the heartbeat (At), so no host's clock enters into it.
//
// Public: a Go program embedding teamkit may import this package.
package roster

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/proc"
)

// States an agent is seen in.
const (
	NeverSpawned  = "never-spawned"   // messages wait for a name spawn never started
	Starting      = "starting"        // recorded, its process not yet up
	Running       = "running"         // the process is alive, not (yet) confirmed ready
	Ready         = "ready"           // alive, and its run marked ready
	Exited        = "exited"          // the process ended; code says how
	Failed        = "failed-to-start" // the launch itself failed
	Lost          = "lost"            // recorded as alive, but the process is gone and left no exit code
	AwaitingHuman = "awaiting-human"  // it asked a question and exited; resume brings it back
	Queued        = "queued"          // waiting for a slot under its host's cap
	Parked        = "parked"          // its run ended on a usage limit; resume re-spawns it once the limit resets
	Failing       = "failing"         // its last re-spawns by resume all failed; only a person's spawn starts it again
)

// DefaultHeartbeat is how often a supervisor renews its run's heartbeat.
const DefaultHeartbeat = 15 * time.Second

// StartingGrace is how long a run may stay recorded with no process before
// it counts as lost: spawn records the launch, then starts the supervisor
// and records its pid within moments, unless it died in between.
const StartingGrace = time.Minute

// LostAfter is how many heartbeat intervals may pass before a run on
// another host counts as lost.
const LostAfter = 3

// HostName names this machine in agent records: TEAMKIT_HOST when set (for
// containers that share a hostname), else the hostname.
func HostName(getenv func(string) string) string {
	if h := getenv("TEAMKIT_HOST"); h != "" {
		return h
	}
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "localhost"
	}
	return h
}

// Here is the point of view a run is judged from.
type Here struct {
	Host string
	// Now is the database's clock (At), the one heartbeats are written
	// with, never this host's own: hosts' clocks drift apart.
	Now time.Time
	// alive holds liveness already read for local identities (Team reads
	// a fleet's at once); Judge reads any other itself.
	alive map[proc.Identity]bool
}

// At is the point of view of host, now by db's clock (mailbox.DB.Now).
func At(ctx context.Context, db *mailbox.DB, host string) (Here, error) {
	now, err := db.Now(ctx)
	return Here{Host: host, Now: now}, err
}

// Liveness is what Judge says of a run not recorded as ended.
type Liveness struct {
	// Live: something of the run may still be running, so a second copy
	// must not start and resume must wait.
	Live bool
	// Local: the run is on this host, so its processes can be signalled.
	Local bool
	// Detail is "pid=N" on this host, "host=H" (fresh heartbeat) or
	// "host=H heartbeat=5m ago" (lost) on another.
	Detail string
}

// Identity is the recorded identity of the run's supervisor.
func Identity(a mailbox.Agent) proc.Identity {
	return proc.Identity{PID: a.PID, Start: a.PIDStart, Boot: a.BootID}
}

// Local reports whether a's run was recorded on here's host (a record
// without a host predates hosts and is taken as local).
func Local(a mailbox.Agent, here Here) bool { return a.Host == "" || a.Host == here.Host }

// Judge is the liveness of a's run from here. Every "is it still running?"
// in the commands' answers goes through here.
func Judge(a mailbox.Agent, here Here) Liveness {
	if !Local(a, here) {
		every := a.Heartbeat
		if every <= 0 {
			every = DefaultHeartbeat
		}
		last := a.UpdatedAt
		if a.HeartbeatAt != nil {
			last = *a.HeartbeatAt
		}
		if age := here.Now.Sub(last); age > LostAfter*every {
			return Liveness{Detail: fmt.Sprintf("host=%s heartbeat=%s ago", a.Host, Age(age))}
		}
		return Liveness{Live: true, Detail: "host=" + a.Host}
	}
	id := Identity(a)
	live, ok := here.alive[id]
	if !ok {
		live = id.Alive()
	}
	return Liveness{Live: live, Local: true, Detail: "pid=" + strconv.Itoa(a.PID)}
}

// Holds reports whether a's run takes one of its host's slots, as the cap
// on the agents running there (spawn --max-running) counts them, judged on
// that host: a launch being started does, for StartingGrace; a queued one
// does not; any other that has not ended does while Judge says it is live.
func Holds(a mailbox.Agent, here Here) bool {
	switch {
	case a.State == mailbox.StateQueued || a.State == mailbox.StateExited || a.State == mailbox.StateFailed:
		return false
	case a.State == mailbox.StateStarting && a.PID == 0:
		return here.Now.Sub(a.UpdatedAt) <= StartingGrace
	}
	return Judge(a, here).Live
}

// State is what is known of an agent from here: a state word and its detail
// ("code=3", "pid=42", "host=b2", "ask=7"). a is nil for a name never
// spawned; ask is its open (awaiting) ask, if any.
func State(a *mailbox.Agent, ask *mailbox.Ask, here Here) (state, detail string) {
	if a == nil {
		return NeverSpawned, ""
	}
	switch a.State {
	case mailbox.StateFailed:
		return Failed, ""
	case mailbox.StateQueued:
		return Queued, ""
	case mailbox.StateExited:
		if hold, detail := holdOf(*a, here.Now); hold != "" {
			return hold, detail
		}
		if ask != nil {
			return AwaitingHuman, fmt.Sprintf("ask=%d", ask.ID)
		}
		if a.ExitCode != nil {
			return Exited, fmt.Sprintf("code=%d", *a.ExitCode)
		}
		return Exited, "code=unknown"
	}
	if a.State == mailbox.StateStarting && a.PID == 0 && Local(*a, here) {
		// Recorded, its supervisor not yet started: for the moment a launch
		// takes, or for good if the spawn died in between (SIGKILL).
		if here.Now.Sub(a.UpdatedAt) > StartingGrace {
			return Lost, "never started"
		}
		return Starting, ""
	}
	j := Judge(*a, here)
	if !j.Live {
		if ask != nil {
			return AwaitingHuman, fmt.Sprintf("ask=%d", ask.ID)
		}
		return Lost, j.Detail
	}
	switch a.State {
	case mailbox.StateStarting:
		return Starting, j.Detail
	case mailbox.StateReady:
		return Ready, j.Detail
	}
	return Running, j.Detail
}

// holdOf is what keeps an ended agent from being re-spawned unattended:
// Failing or Parked with its detail, or "" for nothing. A park whose time
// has come says "due": the next resume pass re-spawns it.
func holdOf(a mailbox.Agent, now time.Time) (state, detail string) {
	switch {
	case a.RespawnFailures >= mailbox.FailingAfter:
		return Failing, fmt.Sprintf("failures=%d", a.RespawnFailures)
	case a.ParkedUntil != nil:
		detail = "until=" + a.ParkedUntil.UTC().Format(time.RFC3339)
		if a.ParkBackoff > 0 {
			detail += " backoff=" + a.ParkBackoff.String()
		}
		if !now.Before(*a.ParkedUntil) {
			detail += " due"
		}
		return Parked, detail
	}
	return "", ""
}

// Respawnable is the one answer to "may agent a be re-spawned unattended
// now?" (a resume pass, for a park or an answer, and any other wake-up
// asks it): not while it is failing, and not before its park ends (now is
// the database's clock, At). why says what holds it, in words fit for a
// note. It says nothing of liveness: a live agent is never re-spawned
// (spawn refuses it), whatever this says.
func Respawnable(a mailbox.Agent, now time.Time) (ok bool, why string) {
	switch {
	case a.RespawnFailures >= mailbox.FailingAfter:
		return false, fmt.Sprintf("%s/%s is failing (its last %d re-spawns failed); run spawn to start it again", a.Team, a.Name, a.RespawnFailures)
	case a.ParkedUntil != nil && now.Before(*a.ParkedUntil):
		return false, fmt.Sprintf("%s/%s is parked until %s", a.Team, a.Name, a.ParkedUntil.UTC().Format(time.RFC3339))
	}
	return true, ""
}

// Describe is State as one column: "running pid=42", "exited code=3",
// "never-spawned".
func Describe(a *mailbox.Agent, ask *mailbox.Ask, here Here) string {
	return column(State(a, ask, here))
}

// column is a state and its detail as Describe prints them.
func column(state, detail string) string {
	if detail == "" {
		return state
	}
	return state + " " + detail
}

// DescribeAll is Describe for each of agents (nil: a name never spawned),
// each with its open ask, which asks supplies (OpenAsks) but is asked for
// only when one of agents is not running: an ask changes only what State
// calls an agent recorded as exited or judged gone (awaiting-human), and
// the recipients stale lists are mostly running or never spawned. An
// agent listed many times (one per message to it) is judged once.
func DescribeAll(agents []*mailbox.Agent, here Here, asks func() (map[string]*mailbox.Ask, error)) ([]string, error) {
	seen := map[*mailbox.Agent]string{}
	var open map[string]*mailbox.Ask
	out := make([]string, len(agents))
	for i, a := range agents {
		desc, ok := seen[a]
		if !ok {
			s, d := State(a, nil, here)
			if a != nil && (s == Exited || s == Lost) {
				if open == nil {
					var err error
					if open, err = asks(); err != nil {
						return nil, err
					}
				}
				s, d = State(a, open[a.Name], here)
			}
			desc = column(s, d)
			seen[a] = desc
		}
		out[i] = desc
	}
	return out, nil
}

// OpenAsks returns team's awaiting asks by agent (the newest one of each).
func OpenAsks(ctx context.Context, db *mailbox.DB, team string) (map[string]*mailbox.Ask, error) {
	asks, err := db.Asks(ctx, team, mailbox.AskAwaiting)
	if err != nil {
		return nil, err
	}
	out := map[string]*mailbox.Ask{}
	for i := range asks {
		out[asks[i].Agent] = &asks[i]
	}
	return out, nil
}

// Entry is one agent of a team at a glance.
type Entry struct {
	Name   string
	Agent  *mailbox.Agent // nil: never spawned (it only has mail)
	State  string
	Detail string
	Unread mailbox.Unread
	Ask    *mailbox.Ask
	// Started is when the current run was launched (zero if unknown).
	Started time.Time
	// Usage is what the current run has used, as its run record says;
	// HasUsage is false for a run without a record.
	Usage    mailbox.Usage
	HasUsage bool
}

// Team lists every agent recorded in team, and every name holding unread
// mail that was never spawned, by name, each with its current run's usage.
// The agents' tasks are not read (Agent.Task is "";
// mailbox.DB.AgentsWithoutTasks).
//
// The liveness of the team's local runs, a /proc read or a system call
// each, is read on two goroutines at once, one of them while the rest of
// the roster is queried: at fleet size the reads were a quarter of a
// listing.
func Team(ctx context.Context, db *mailbox.DB, team string, here Here) ([]Entry, error) {
	agents, err := db.AgentsWithoutTasks(ctx, team)
	if err != nil {
		return nil, err
	}
	j := newJudging(agents, here)
	var aside sync.WaitGroup
	if len(j.ids) >= judgeAside {
		aside.Go(j.work)
	}
	unread, asks, usage, err := teamRecords(ctx, db, team)
	j.work()
	aside.Wait()
	here.alive = j.answers()
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(agents)+len(unread))
	seen := make(map[string]bool, len(agents))
	for i := range agents {
		a := &agents[i]
		seen[a.Name] = true
		e := Entry{Name: a.Name, Agent: a, Unread: unread[a.Name], Ask: asks[a.Name], Started: RunStarted(a.Run)}
		e.Usage, e.HasUsage = usage[a.Name]
		e.State, e.Detail = State(a, e.Ask, here)
		out = append(out, e)
	}
	for name, u := range unread {
		if !seen[name] {
			out = append(out, Entry{Name: name, State: NeverSpawned, Unread: u})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// teamRecords reads the rest of team's roster: unread mail and open asks
// by recipient, and the usage of each agent's current run.
func teamRecords(ctx context.Context, db *mailbox.DB, team string) (map[string]mailbox.Unread, map[string]*mailbox.Ask, map[string]mailbox.Usage, error) {
	unread, err := db.UnreadByRecipient(ctx, team)
	if err != nil {
		return nil, nil, nil, err
	}
	asks, err := OpenAsks(ctx, db, team)
	if err != nil {
		return nil, nil, nil, err
	}
	usage, err := db.LatestUsage(ctx, team)
	return unread, asks, usage, err
}

// judgeAside is how many runs to judge make a second goroutine worth its
// start: below it, the reads take less time than waking another thread.
const judgeAside = 16

// judging is the liveness of a team's local runs, read by Team on two
// goroutines at once, each taking the next identity not yet taken.
type judging struct {
	ids  []proc.Identity
	live []bool
	next atomic.Int64
}

func newJudging(agents []mailbox.Agent, here Here) *judging {
	j := &judging{}
	for _, a := range agents {
		if judgedHere(a, here) {
			j.ids = append(j.ids, Identity(a))
		}
	}
	j.live = make([]bool, len(j.ids))
	return j
}

func (j *judging) work() {
	for i := int(j.next.Add(1) - 1); i < len(j.ids); i = int(j.next.Add(1) - 1) {
		j.live[i] = j.ids[i].Alive()
	}
}

// answers is every identity's liveness, once both have done their work.
func (j *judging) answers() map[proc.Identity]bool {
	alive := make(map[proc.Identity]bool, len(j.ids))
	for i, id := range j.ids {
		alive[id] = j.live[i]
	}
	return alive
}

// judgedHere reports whether State judges a's run by its supervisor's
// identity on here's host: a local run with a pid, recorded as neither
// ended nor queued.
func judgedHere(a mailbox.Agent, here Here) bool {
	switch a.State {
	case mailbox.StateExited, mailbox.StateFailed, mailbox.StateQueued:
		return false
	}
	return a.PID > 0 && Local(a, here)
}

// RunLayout is the time prefix of a run id (spawn.NewRun): a run says when
// it was launched.
const RunLayout = "20060102T150405Z"

// RunStarted is the launch time a run id carries, zero when it has none.
func RunStarted(run string) time.Time {
	if len(run) < len(RunLayout) {
		return time.Time{}
	}
	t, err := time.Parse(RunLayout, run[:len(RunLayout)])
	if err != nil {
		return time.Time{}
	}
	return t
}

// Silence is how long a's run has shown no activity (its last line of
// output or stream event, mailbox.Agent.LastActiveAt, as of its latest
// heartbeat), by the database's clock; ok only when state, a's observed
// state (State), is running or ready: an ended or lost run is not silent,
// it is gone.
func Silence(a *mailbox.Agent, state string, here Here) (d time.Duration, ok bool) {
	if a == nil || a.LastActiveAt == nil || (state != Running && state != Ready) {
		return 0, false
	}
	return max(here.Now.Sub(*a.LastActiveAt), 0), true
}

// Age is a short duration: 45s, 12m, 3h05m, 2d04h.
// (Built with strconv: stale prints one per listed message.)
func Age(d time.Duration) string {
	var b []byte
	switch h := int(d.Hours()); {
	case d < time.Minute:
		b = append(strconv.AppendInt(b, int64(d.Seconds()), 10), 's')
	case d < time.Hour:
		b = append(strconv.AppendInt(b, int64(d.Minutes()), 10), 'm')
	case d < 24*time.Hour:
		b = append(twoDigits(append(strconv.AppendInt(b, int64(h), 10), 'h'), int(d.Minutes())%60), 'm')
	default:
		b = append(twoDigits(append(strconv.AppendInt(b, int64(h/24), 10), 'd'), h%24), 'h')
	}
	return string(b)
}

func twoDigits(b []byte, n int) []byte { return append(b, byte('0'+n/10), byte('0'+n%10)) }
