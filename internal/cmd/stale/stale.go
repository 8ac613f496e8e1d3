// Package stale is the stale command: messages sent but never read.
//
//	stale <team> [--to AGENT] [--min N | --idle N] [--json]
//
// It lists the team's messages still unread N minutes (default 10) after
// they were sent — id, recipient, sender, age, first line — with what is
// known of the recipient (roster.Describe): never spawned, running, ready,
// exited (with its code), lost, or awaiting a human. With --idle it lists
// instead the running agents silent for N minutes: no line of output nor
// stream event (mailbox.Agent.LastActiveAt). Exit 2 when any exist, 0 when
// none: built for cron ("stale myteam --min 10 || notify") and for
// dispatch loops.
//
// Internal: the commands' own code; no user should import it.
package stale

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/pkg/launch"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/roster"
	"github.com/teamkit/teamkit/pkg/text"
)

// App is the stale command.
var App = command.App{Build: build, Quick: []string{"stale"}}

func build(env *command.Env) *cli.App {
	return &cli.App{
		Name:      "stale",
		Usage:     "list messages sent but still unread after N minutes; exit 2 when any",
		ArgsUsage: "<team>",
		UsageText: "stale <team> [--to AGENT] [--min N | --idle N] [--json]",
		Description: "<team> defaults to $TEAMKIT_TEAM. RECIPIENT says whether the worker is slow or dead: never-spawned,\n" +
			"running/ready pid=N, exited code=N, lost pid=N (gone without an exit code), awaiting-human ask=N.\n" +
			"--idle N lists instead the running agents that printed nothing (no line, no stream event) for N minutes,\n" +
			"as of their last heartbeat.\n" +
			"Exit status: 0 none, 2 stale messages (idle agents) exist, 1 failure, 64 usage error.\n\n" +
			"Examples:\n" +
			"   stale myteam --min 10 || echo \"work is sitting unread\"\n" +
			"   stale myteam --to w1 --min 0 --json\n" +
			"   stale myteam --idle 15 || echo \"a worker is stuck\"",
		Flags: command.Common(
			&cli.StringFlag{Name: "to", Usage: "only messages to `AGENT` (with --idle: only that agent)"},
			&cli.Float64Flag{Name: "min", Value: 10, Usage: "unread for at least `N` minutes"},
			&cli.Float64Flag{Name: "idle", Usage: "list running agents silent for at least `N` minutes, not messages"},
		),
		Action: func(c *cli.Context) error { return run(c, env) },
	}
}

// Row is one stale message as --json prints it: the message fields plus its
// age and what is known of the recipient.
type Row struct {
	mailbox.Message
	AgeSeconds int64          `json:"age_seconds"`
	Recipient  string         `json:"recipient"`
	Agent      *mailbox.Agent `json:"agent"`
}

// MarshalJSON writes the message's contract fields followed by age_seconds,
// recipient and agent (without it the embedded Message's MarshalJSON would
// be promoted and drop them).
func (r Row) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // a body with "<" or "&" comes out as sent
	err := enc.Encode(struct {
		mailbox.MessageJSON
		AgeSeconds int64          `json:"age_seconds"`
		Recipient  string         `json:"recipient"`
		Agent      *mailbox.Agent `json:"agent"`
	}{r.Message.JSON(), r.AgeSeconds, r.Recipient, r.Agent})
	return bytes.TrimSpace(b.Bytes()), err
}

// Options is one stale run, parsed and checked.
type Options struct {
	Team string
	// To is the one recipient looked at, "" for the whole team.
	To string
	// Min is how long a message must have been unread.
	Min time.Duration
	// Idle, when IdleSet, lists running agents silent that long instead.
	Idle    time.Duration
	IdleSet bool
	JSON    bool
	// RunsDir holds the mailbox's run files on this host; Host names it.
	RunsDir, Host string
}

func run(c *cli.Context, env *command.Env) error {
	o, err := parse(c, env)
	if err != nil {
		return err
	}
	return command.WithMailbox(c, env, o.run)
}

func parse(c *cli.Context, env *command.Env) (*Options, error) {
	team, _, rest, err := command.Identity(env, c.Args().Slice(), 1)
	if err != nil {
		return nil, err
	}
	if len(rest) > 0 {
		return nil, command.Usagef("unexpected argument %q (usage: stale <team> [--to AGENT] [--min N])", rest[0])
	}
	to := c.String("to")
	if to != "" {
		if err := command.CheckName("agent", to); err != nil {
			return nil, err
		}
	}
	mins, idle := c.Float64("min"), c.Float64("idle")
	for _, f := range []struct {
		name string
		v    float64
	}{{"min", mins}, {"idle", idle}} {
		if !(f.v >= 0 && f.v <= 1e8) { // also refuses NaN and Inf
			return nil, command.Usagef("--%s must be a number of minutes from 0 to 100000000", f.name)
		}
	}
	if c.IsSet("idle") && c.IsSet("min") {
		return nil, command.WithHint(command.Usagef("--idle lists agents and --min messages; give one of them"),
			"run stale twice: 'stale "+team+" --min N' and 'stale "+team+" --idle N'")
	}
	return &Options{Team: team, To: to, Min: time.Duration(mins * float64(time.Minute)),
		Idle: time.Duration(idle * float64(time.Minute)), IdleSet: c.IsSet("idle"), JSON: c.Bool("json"),
		RunsDir: command.RunsDir(c, env), Host: roster.HostName(env.Getenv)}, nil
}

// run lists the stale messages; exit 2 when there are any.
func (o *Options) run(ctx context.Context, env *command.Env, db *mailbox.DB) error {
	team := o.Team
	launch.RecordSpooled(ctx, db, o.RunsDir, team)
	now := env.Now()
	here, err := roster.At(ctx, db, o.Host)
	if err != nil {
		return err
	}
	if o.IdleSet {
		return o.idle(ctx, env, db, here)
	}
	msgs, err := db.Stale(ctx, team, o.To, now.Add(-o.Min))
	if err != nil {
		return err
	}
	if len(msgs) == 0 {
		command.NoteUnknownTeam(ctx, env, "stale", db, team)
	}
	recipients := make([]*mailbox.Agent, len(msgs))
	for i, m := range msgs {
		recipients[i] = m.Recipient
	}
	described, err := roster.DescribeAll(recipients, here, func() (map[string]*mailbox.Ask, error) { return roster.OpenAsks(ctx, db, team) })
	if err != nil {
		return err
	}
	// One write, not one per table cell (thousands of syscalls for a few
	// hundred rows).
	out := bufio.NewWriter(env.Stdout)
	if o.JSON {
		for i, m := range msgs {
			row := Row{Message: m.Message, AgeSeconds: int64(now.Sub(m.CreatedAt).Seconds()), Recipient: described[i], Agent: m.Recipient}
			if err := command.JSON(out, row); err != nil {
				return err
			}
		}
	} else if len(msgs) > 0 {
		tw := env.Table(out, "ID", "TO", "FROM", "AGE", "RECIPIENT", "FIRST LINE")
		tw.Grow(len(msgs))
		for i, m := range msgs {
			tw.Row(strconv.FormatInt(m.ID, 10), m.To, m.From, roster.Age(now.Sub(m.CreatedAt)), described[i], text.FirstLine(m.Body, 60))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if err := out.Flush(); err != nil {
		return err
	}
	if len(msgs) > 0 {
		return command.Condition()
	}
	return nil
}

// IdleRow is one silent agent as --idle --json prints it: who, how long it
// has been silent and since when, what is known of it (as RECIPIENT says
// it), and its record.
type IdleRow struct {
	Team         string         `json:"team"`
	Name         string         `json:"name"`
	IdleSeconds  int64          `json:"idle_seconds"`
	LastActiveAt time.Time      `json:"last_active_at"`
	State        string         `json:"state"`
	Agent        *mailbox.Agent `json:"agent"`
}

// idle lists the running agents silent for at least Idle, longest silent
// first; exit 2 when there are any.
func (o *Options) idle(ctx context.Context, env *command.Env, db *mailbox.DB, here roster.Here) error {
	var agents []mailbox.Agent
	if o.To != "" {
		a, err := db.Agent(ctx, o.Team, o.To)
		if err != nil && !errors.Is(err, mailbox.ErrNotFound) {
			return err
		}
		if err == nil {
			agents = append(agents, a)
		}
	} else {
		var err error
		if agents, err = db.Agents(ctx, o.Team); err != nil {
			return err
		}
	}
	var rows []IdleRow
	for i := range agents {
		a := &agents[i]
		state, _ := roster.State(a, nil, here)
		if d, ok := roster.Silence(a, state, here); ok && d >= o.Idle {
			rows = append(rows, IdleRow{Team: o.Team, Name: a.Name, IdleSeconds: int64(d.Seconds()),
				LastActiveAt: a.LastActiveAt.UTC(), State: roster.Describe(a, nil, here), Agent: a})
		}
	}
	if len(agents) == 0 && o.To == "" {
		command.NoteUnknownTeam(ctx, env, "stale", db, o.Team)
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].LastActiveAt.Before(rows[j].LastActiveAt) })
	out := bufio.NewWriter(env.Stdout)
	if o.JSON {
		for _, r := range rows {
			if err := command.JSON(out, r); err != nil {
				return err
			}
		}
	} else if len(rows) > 0 {
		tw := env.Table(out, "AGENT", "TYPE", "IDLE", "SINCE", "STATE", "LOG")
		for _, r := range rows {
			tw.Row(r.Name, r.Agent.Type, roster.Age(time.Duration(r.IdleSeconds)*time.Second),
				command.FormatTime(r.LastActiveAt), r.State, r.Agent.Log)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if err := out.Flush(); err != nil {
		return err
	}
	if len(rows) > 0 {
		return command.Condition()
	}
	return nil
}
