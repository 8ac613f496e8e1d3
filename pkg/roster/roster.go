// Package roster is a team at a glance: for each agent, whether it is
// running, ready, exited (and how), lost, or waiting for a human, how much
// unread work sits in its inbox and since when, and its open question. It is
// the one answer to "is the worker slow or dead?": stale's recipient column,
// spawn list and anything else that asks call State, and State alone decides
// liveness (through Alive).
package roster

import (
	"context"
	"fmt"
	"sort"
	"strings"
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
)

// Alive is the liveness of an agent's recorded process. Every "is it still
// running?" in the commands' answers goes through here.
func Alive(a mailbox.Agent) bool { return proc.Alive(a.PID) }

// State is what is known of an agent: a state word and its detail
// ("code=3", "pid=42", "ask=7"). a is nil for a name never spawned; ask is
// its open (awaiting) ask, if any.
func State(a *mailbox.Agent, ask *mailbox.Ask) (state, detail string) {
	if a == nil {
		return NeverSpawned, ""
	}
	switch a.State {
	case mailbox.StateFailed:
		return Failed, ""
	case mailbox.StateExited:
		if ask != nil {
			return AwaitingHuman, fmt.Sprintf("ask=%d", ask.ID)
		}
		if a.ExitCode != nil {
			return Exited, fmt.Sprintf("code=%d", *a.ExitCode)
		}
		return Exited, "code=unknown"
	}
	if !Alive(*a) {
		if ask != nil {
			return AwaitingHuman, fmt.Sprintf("ask=%d", ask.ID)
		}
		return Lost, fmt.Sprintf("pid=%d", a.PID)
	}
	switch a.State {
	case mailbox.StateStarting:
		return Starting, fmt.Sprintf("pid=%d", a.PID)
	case mailbox.StateReady:
		return Ready, fmt.Sprintf("pid=%d", a.PID)
	}
	return Running, fmt.Sprintf("pid=%d", a.PID)
}

// Describe is State as one column: "running pid=42", "exited code=3",
// "never-spawned".
func Describe(a *mailbox.Agent, ask *mailbox.Ask) string {
	s, d := State(a, ask)
	if d == "" {
		return s
	}
	return s + " " + d
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
}

// Team lists every agent recorded in team, and every name holding unread
// mail that was never spawned, by name.
func Team(ctx context.Context, db *mailbox.DB, team string) ([]Entry, error) {
	agents, err := db.Agents(ctx, team)
	if err != nil {
		return nil, err
	}
	unread, err := db.UnreadByRecipient(ctx, team)
	if err != nil {
		return nil, err
	}
	asks, err := OpenAsks(ctx, db, team)
	if err != nil {
		return nil, err
	}
	var out []Entry
	seen := map[string]bool{}
	for i := range agents {
		a := &agents[i]
		seen[a.Name] = true
		e := Entry{Name: a.Name, Agent: a, Unread: unread[a.Name], Ask: asks[a.Name], Started: RunStarted(a.Run)}
		e.State, e.Detail = State(a, e.Ask)
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

// Age is a short duration: 45s, 12m, 3h05m, 2d04h.
func Age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
}

// FirstLine is the first line of s, cut to max runes (0: no cut).
func FirstLine(s string, max int) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	if r := []rune(s); max > 0 && len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}
