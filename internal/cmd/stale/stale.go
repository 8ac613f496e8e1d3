// Package stale is the stale command: messages sent but never read.
//
//	stale <team> [--to AGENT] [--min N] [--json]
//
// It lists the team's messages still unread N minutes (default 10) after
// they were sent — id, recipient, sender, age, first line — with what is
// known of the recipient (roster.Describe): never spawned, running, ready,
// exited (with its code), lost, or awaiting a human. Exit 2 when any exist, 0 when none: built for cron
// ("stale myteam --min 10 || notify") and for dispatch loops.
//
// Internal: the commands' own code; no user should import it.
package stale

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/pkg/launch"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/roster"
	"github.com/teamkit/teamkit/pkg/text"
)

// App is the stale command.
var App = command.App{Build: build}

func build(env *command.Env) *cli.App {
	return &cli.App{
		Name:      "stale",
		Usage:     "list messages sent but still unread after N minutes; exit 2 when any",
		ArgsUsage: "<team>",
		UsageText: "stale <team> [--to AGENT] [--min N] [--json]",
		Description: "<team> defaults to $TEAMKIT_TEAM. RECIPIENT says whether the worker is slow or dead: never-spawned,\n" +
			"running/ready pid=N, exited code=N, lost pid=N (gone without an exit code), awaiting-human ask=N.\n" +
			"Exit status: 0 none, 2 stale messages exist, 1 failure, 64 usage error.\n\n" +
			"Examples:\n" +
			"   stale myteam --min 10 || echo \"work is sitting unread\"\n" +
			"   stale myteam --to w1 --min 0 --json",
		Flags: command.Common(
			&cli.StringFlag{Name: "to", Usage: "only messages to `AGENT`"},
			&cli.Float64Flag{Name: "min", Value: 10, Usage: "unread for at least `N` minutes"},
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
	Min  time.Duration
	JSON bool
	// RunsDir holds the mailbox's run files on this host; Host names it.
	RunsDir, Host string
}

func run(c *cli.Context, env *command.Env) error {
	return command.ParseThenRun(c, env, parse, (*Options).run)
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
	mins := c.Float64("min")
	if !(mins >= 0 && mins <= 1e8) { // also refuses NaN and Inf
		return nil, command.Usagef("--min must be a number of minutes from 0 to 100000000")
	}
	return &Options{Team: team, To: to, Min: time.Duration(mins * float64(time.Minute)), JSON: c.Bool("json"),
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
	msgs, err := db.Stale(ctx, team, o.To, now.Add(-o.Min))
	if err != nil {
		return err
	}
	var asks map[string]*mailbox.Ask
	if len(msgs) > 0 {
		if asks, err = roster.OpenAsks(ctx, db, team); err != nil {
			return err
		}
	} else {
		command.NoteUnknownTeam(ctx, env, "stale", db, team)
	}
	// One write, not one per table cell (thousands of syscalls for a few
	// hundred rows).
	out := bufio.NewWriter(env.Stdout)
	if o.JSON {
		for _, m := range msgs {
			row := Row{Message: m.Message, AgeSeconds: int64(now.Sub(m.CreatedAt).Seconds()), Recipient: roster.Describe(m.Recipient, asks[m.To], here), Agent: m.Recipient}
			if err := command.JSON(out, row); err != nil {
				return err
			}
		}
	} else if len(msgs) > 0 {
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tTO\tFROM\tAGE\tRECIPIENT\tFIRST LINE")
		for _, m := range msgs {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", m.ID, m.To, m.From, roster.Age(now.Sub(m.CreatedAt)), roster.Describe(m.Recipient, asks[m.To], here), env.Show(text.FirstLine(m.Body, 60)))
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
