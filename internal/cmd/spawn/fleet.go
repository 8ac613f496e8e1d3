package spawn

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/pkg/launch"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/roster"
	"github.com/teamkit/teamkit/pkg/text"
)

// The fleet verbs: a team at a glance, and an agent's log. They live on
// spawn, where a user who started the agents looks for them.

func listCommand(env *command.Env) *cli.Command {
	return &cli.Command{
		Name:      "list",
		Usage:     "the team's agents: state, pid, unread work, open question, log",
		ArgsUsage: "<team>",
		UsageText: "spawn list <team> [--json] [--watch [--interval D]]",
		Description: "STATE is running, ready, starting, exited code=N, lost (recorded as running, but the process is gone),\n" +
			"awaiting-human (it asked and exited; resume brings it back), failed-to-start, or never-spawned (mail waits\n" +
			"for a name spawn never started). ACTIVE is how long ago a running agent last printed a line or a stream\n" +
			"event (as of its last heartbeat). UNREAD and OLDEST are its unread messages and the age of the oldest.\n" +
			"--watch redraws the table when the mailbox changes and every --interval, in place on a terminal\n" +
			"(successive tables on a pipe), until interrupted.\n\n" +
			"Examples:\n   spawn list myteam\n   spawn list myteam --watch\n" +
			"   spawn list myteam --json | jq -r 'select(.state == \"lost\") | .name'",
		Flags: command.Common(
			&cli.BoolFlag{Name: "watch", Aliases: []string{"w"}, Usage: "redraw the table until interrupted"},
			command.DurationFlagDefault("interval", "redraw --watch's table at least every `D` (2 = 2s, 500ms)", defaultWatchInterval),
		),
		Action: func(c *cli.Context) error {
			o, err := parseList(c, env)
			if err != nil {
				return err
			}
			o.look = launch.LookSpooled(o.RunsDir, o.Team)
			return command.WithMailbox(c, env, o.run)
		},
	}
}

func logCommand(env *command.Env) *cli.Command {
	return &cli.Command{
		Name:      "log",
		Usage:     "print the log of the agent's latest run (--follow: until it ends)",
		ArgsUsage: "<team> <name>",
		UsageText: "spawn log <team> <name> [--follow]",
		Description: "The log holds the agent's output (background launches) and the supervisor's notes of start and exit.\n\n" +
			"Examples:\n   spawn log myteam w1\n   spawn log myteam w1 --follow     # like tail -f, returns when the agent's run ends",
		Flags: []cli.Flag{command.DBFlag,
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep printing what is appended, until the run ends"}},
		Action: func(c *cli.Context) error {
			o, err := parseLog(c, env)
			if err != nil {
				return err
			}
			return command.WithMailbox(c, env, o.run)
		},
	}
}

// listed is one agent as spawn list --json prints it: the agent contract's
// fields, with state the observed one (roster.State), plus what it knows.
type listed struct {
	Team          string `json:"team"`
	Name          string `json:"name"`
	Type          string `json:"type"`
	Run           string `json:"run"`
	PID           int    `json:"pid"`
	State         string `json:"state"`
	Detail        string `json:"detail"`
	RecordedState string `json:"recorded_state"`
	ExitCode      *int   `json:"exit_code"`
	Log           string `json:"log"`
	Issue         string `json:"issue"`
	Worktree      string `json:"worktree"`
	Branch        string `json:"branch"`
	Wake          string `json:"wake"` // "mail" for a wake agent (spawn --wake)
	// Budget is what each of its runs may use (spawn --budget-tokens,
	// --budget-usd); {} when none.
	Budget    mailbox.Budget `json:"budget"`
	StartedAt *time.Time     `json:"started_at"`
	// LastActiveAt is when the run last printed a line or a stream event
	// (mailbox.Agent.LastActiveAt), as of its last heartbeat.
	LastActiveAt *time.Time `json:"last_active_at"`
	Unread       int        `json:"unread"`
	OldestUnread *time.Time `json:"oldest_unread_at"`
	OldestAge    *int64     `json:"oldest_unread_seconds"`
	Ask          *listedAsk `json:"ask"`
	// Tokens and CostUSD are those of the latest run (spawn runs).
	Tokens  mailbox.Tokens `json:"tokens"`
	CostUSD *float64       `json:"cost_usd"`
	// ParkedUntil is when its usage-limit park ends (null: not parked);
	// ParkBackoffSeconds > 0 when the CLI gave no reset and teamkit backs
	// off. RespawnFailures counts its failed re-spawns by resume in a row
	// (mailbox.FailingAfter make it failing).
	ParkedUntil        *time.Time `json:"parked_until"`
	ParkBackoffSeconds float64    `json:"park_backoff_seconds"`
	LimitEnds          int        `json:"limit_ends"`
	RespawnFailures    int        `json:"respawn_failures"`
}

type listedAsk struct {
	ID        int64     `json:"id"`
	Kind      string    `json:"kind"`
	Question  string    `json:"question"`
	CreatedAt time.Time `json:"created_at"`
}

// defaultWatchInterval and minWatchInterval bound how often spawn list
// --watch redraws without a change: ages (ACTIVE, OLDEST) move on their own.
const (
	defaultWatchInterval = 2 * time.Second
	minWatchInterval     = 100 * time.Millisecond
)

// listOptions is one `spawn list`, parsed and checked.
type listOptions struct {
	Team string
	JSON bool
	// Watch redraws the table every Interval, and when the mailbox changes.
	Watch    bool
	Interval time.Duration
	// RunsDir holds the mailbox's run files on this host; Host names it.
	RunsDir, Host string
	// look is the look for spooled ends, begun before the mailbox opened.
	look *launch.SpoolLook
}

func parseList(c *cli.Context, env *command.Env) (*listOptions, error) {
	team, _, rest, err := command.Identity(env, c.Args().Slice(), 1)
	if err != nil {
		return nil, err
	}
	if len(rest) > 0 {
		return nil, command.Usagef("unexpected argument %q (usage: spawn list <team>)", rest[0])
	}
	o := &listOptions{Team: team, JSON: c.Bool("json"), Watch: c.Bool("watch"), Interval: command.Duration(c, "interval"),
		RunsDir: command.RunsDir(c, env), Host: roster.HostName(env.Getenv)}
	switch {
	case o.Watch && o.JSON:
		return nil, command.WithHint(command.Usagef("--watch draws a table; it does not take --json"),
			"for JSON, run 'spawn list "+team+" --json' as often as you need")
	case o.Interval < minWatchInterval:
		return nil, command.Usagef("--interval %s is too short: want %s or more (say 2, 1m)", o.Interval, minWatchInterval)
	}
	return o, nil
}

// run prints the team's agents, one line (or JSON object) each; with
// Watch, again and again until ctx ends.
func (o *listOptions) run(ctx context.Context, env *command.Env, db *mailbox.DB) error {
	if !o.Watch {
		return o.print(ctx, env, db, env.Stdout)
	}
	return o.watch(ctx, env, db)
}

// print writes the team's agents to w, one line (or JSON object) each.
func (o *listOptions) print(ctx context.Context, env *command.Env, db *mailbox.DB, w io.Writer) error {
	team := o.Team
	if o.look != nil {
		// Begun while the mailbox opened; a --watch redraw looks afresh.
		o.look.Record(ctx, db)
		o.look = nil
	} else {
		launch.RecordSpooled(ctx, db, o.RunsDir, team)
	}
	here, err := roster.At(ctx, db, o.Host)
	if err != nil {
		return err
	}
	entries, err := roster.Team(ctx, db, team, here)
	if err != nil {
		return err
	}
	if len(entries) == 0 && !o.Watch {
		command.NoteUnknownTeam(ctx, env, "spawn", db, team)
	}
	now := env.Now()
	if o.JSON {
		out := bufio.NewWriter(w) // one write, not one per agent
		for _, e := range entries {
			l := toListed(team, e, now)
			if e.HasUsage {
				l.Tokens, l.CostUSD = e.Usage.Tokens, e.Usage.CostUSD
			}
			l.StartedAt = nil
			if t := startedOf(e); !t.IsZero() {
				t = t.UTC()
				l.StartedAt = &t
			}
			if err := command.JSON(out, l); err != nil {
				return err
			}
		}
		return out.Flush()
	}
	if len(entries) == 0 && !o.Watch {
		return nil
	}
	tw := env.Table(w, "NAME", "TYPE", "STATE", "PID", "STARTED", "ACTIVE", "UNREAD", "OLDEST", "ASK", "TOKENS", "COST", "LOG")
	for _, e := range entries {
		state := e.State
		if e.Detail != "" && !strings.HasPrefix(e.Detail, "pid=") {
			state += " " + e.Detail
		}
		typ, pid, started, log := "-", "-", "-", "-"
		if a := e.Agent; a != nil {
			typ, log = a.Type, a.Log
			if a.PID > 0 {
				pid = strconv.Itoa(a.PID)
			}
		}
		if t := startedOf(e); !t.IsZero() {
			started = command.FormatTime(t)
		}
		active := "-"
		if d, ok := roster.Silence(e.Agent, e.State, here); ok {
			active = roster.Age(d)
		}
		oldest := "-"
		if e.Unread.Count > 0 {
			oldest = roster.Age(unreadAge(now, e.Unread.Oldest))
		}
		ask := "-"
		if e.Ask != nil {
			ask = fmt.Sprintf("%d %s", e.Ask.ID, text.FirstLine(e.Ask.Question, 40))
		}
		tokens, cost := "-", "-"
		if e.HasUsage {
			tokens, cost = tokensOf(e.Usage.Tokens), costOf(e.Usage.CostUSD)
		}
		tw.Row(e.Name, typ, state, pid, started, active, strconv.Itoa(e.Unread.Count), oldest, ask, tokens, cost, log)
	}
	return tw.Flush()
}

// watch prints the table, then again each time the mailbox changes or
// Interval passes, until ctx ends (Ctrl-C: exit 0). On a terminal each
// table is drawn over the last one (cursor home, each line cleared to its
// end, then the rest of the screen: no flicker); on a pipe the tables
// follow each other, a blank line apart.
func (o *listOptions) watch(ctx context.Context, env *command.Env, db *mailbox.DB) error {
	var buf bytes.Buffer
	for {
		buf.Reset()
		err := o.print(ctx, env, db, &buf)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		if env.StdoutTTY {
			out := bytes.ReplaceAll(buf.Bytes(), []byte("\n"), []byte("\x1b[K\n"))
			buf.Reset()
			buf.WriteString("\x1b[H")
			buf.Write(out)
			buf.WriteString("\x1b[J")
		} else {
			buf.WriteString("\n")
		}
		if _, err := env.Stdout.Write(buf.Bytes()); err != nil {
			return err
		}
		first := true
		_, err = db.Watch(ctx, o.Team, time.Now().Add(o.Interval), func() (bool, error) {
			changed := !first
			first = false
			return changed, nil
		})
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// startedOf is when e's current run started: its run record's start (a
// queued run starts when a slot frees, not when its id was made), zero for
// a run still queued; the time in its run id for a run without a record.
func startedOf(e roster.Entry) time.Time {
	if e.State == roster.Queued {
		return time.Time{}
	}
	if e.HasUsage && !e.Usage.StartedAt.IsZero() {
		return e.Usage.StartedAt
	}
	return e.Started
}

func toListed(team string, e roster.Entry, now time.Time) listed {
	l := listed{Team: team, Name: e.Name, State: e.State, Detail: e.Detail, Unread: e.Unread.Count}
	if a := e.Agent; a != nil {
		l.Type, l.Run, l.PID, l.RecordedState, l.ExitCode, l.Log, l.Issue = a.Type, a.Run, a.PID, a.State, a.ExitCode, a.Log, a.Issue
		l.Worktree, l.Branch, l.Wake = a.Worktree, a.Branch, a.Wake
		if a.LastActiveAt != nil {
			t := a.LastActiveAt.UTC()
			l.LastActiveAt = &t
		}
		l.ParkedUntil, l.ParkBackoffSeconds, l.LimitEnds, l.RespawnFailures = a.ParkedUntil, a.ParkBackoff.Seconds(), a.LimitEnds, a.RespawnFailures
		l.Budget = a.Budget
	}
	if !e.Started.IsZero() {
		t := e.Started.UTC()
		l.StartedAt = &t
	}
	if e.Unread.Count > 0 {
		t := e.Unread.Oldest.UTC()
		age := int64(unreadAge(now, t).Seconds())
		l.OldestUnread, l.OldestAge = &t, &age
	}
	if e.Ask != nil {
		l.Ask = &listedAsk{ID: e.Ask.ID, Kind: e.Ask.Kind, Question: e.Ask.Question, CreatedAt: e.Ask.CreatedAt.UTC()}
	}
	return l
}

// unreadAge is how long ago oldest was sent, 0 for a message stamped
// ahead of now (its sender's clock is ahead): an age is never negative.
func unreadAge(now, oldest time.Time) time.Duration { return max(now.Sub(oldest), 0) }

// followPoll is how often --follow looks for more output.
const followPoll = 200 * time.Millisecond

// logOptions is one `spawn log`, parsed and checked.
type logOptions struct {
	Team, Name string
	Follow     bool
	// Host names this host, where --follow judges the run's liveness.
	Host string
}

func parseLog(c *cli.Context, env *command.Env) (*logOptions, error) {
	team, name, rest, err := command.Identity(env, c.Args().Slice(), 2)
	if err != nil {
		return nil, err
	}
	if len(rest) > 0 {
		return nil, command.Usagef("unexpected argument %q (usage: spawn log <team> <name>)", rest[0])
	}
	return &logOptions{Team: team, Name: name, Follow: c.Bool("follow"), Host: roster.HostName(env.Getenv)}, nil
}

// run prints the log of the agent's latest run, and with --follow what is
// appended to it until the run ends.
func (o *logOptions) run(ctx context.Context, env *command.Env, db *mailbox.DB) error {
	team, name := o.Team, o.Name
	a, err := db.Agent(ctx, team, name)
	if errors.Is(err, mailbox.ErrNotFound) {
		return command.WithHint(err, "spawn list "+team+" shows the team's agents")
	}
	if err != nil {
		return err
	}
	f, err := os.Open(a.Log)
	if errors.Is(err, fs.ErrNotExist) && o.Follow {
		// A queued run (or one whose supervisor is starting) has no log
		// yet: --follow waits for it, as it waits for the run's end.
		f, a, err = o.waitLog(ctx, db, a)
	}
	if err != nil {
		hint := "the log may have been pruned (inbox prune)"
		if a.State == mailbox.StateQueued || a.State == mailbox.StateStarting {
			hint = "the run has not started yet (" + a.State + "); --follow waits for it"
		}
		return command.WithHint(fmt.Errorf("agent %s/%s run %s: %w", team, name, a.Run, err), hint)
	}
	defer f.Close()
	if _, err := io.Copy(env.Stdout, f); err != nil {
		return err
	}
	if !o.Follow {
		return nil
	}
	return follow(ctx, db, f, a, env.Stdout, o.Host)
}

// waitLog waits for the log of a's run, while that run waits in the queue
// or is being started; it returns the log opened and the agent's record
// (the latest run's, should a later launch replace it meanwhile).
func (o *logOptions) waitLog(ctx context.Context, db *mailbox.DB, a mailbox.Agent) (*os.File, mailbox.Agent, error) {
	t := time.NewTicker(followPoll)
	defer t.Stop()
	for {
		f, err := os.Open(a.Log)
		if !errors.Is(err, fs.ErrNotExist) {
			return f, a, err
		}
		here, herr := roster.At(ctx, db, o.Host)
		if herr != nil {
			return nil, a, herr
		}
		if state, _ := roster.State(&a, nil, here); state != roster.Queued && state != roster.Starting {
			return nil, a, err
		}
		select {
		case <-ctx.Done():
			return nil, a, ctx.Err()
		case <-t.C:
		}
		if a, err = db.Agent(ctx, a.Team, a.Name); err != nil {
			return nil, a, err
		}
	}
}

// follow copies what is appended to f until a's run ends (its supervisor
// writes the exit note last, so nothing is missed) or ctx ends.
func follow(ctx context.Context, db *mailbox.DB, f *os.File, a mailbox.Agent, w io.Writer, host string) error {
	t := time.NewTicker(followPoll)
	defer t.Stop()
	for {
		now, err := db.Agent(ctx, a.Team, a.Name)
		if err != nil {
			return err
		}
		here, err := roster.At(ctx, db, host)
		if err != nil {
			return err
		}
		state, _ := roster.State(&now, nil, here)
		ended := now.Run != a.Run || !(state == roster.Running || state == roster.Ready || state == roster.Starting)
		if _, err := io.Copy(w, f); err != nil {
			return err
		}
		if ended {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
