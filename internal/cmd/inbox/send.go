package inbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/names"
)

func sendCommand(env *command.Env) *cli.Command {
	return &cli.Command{
		Name:      "send",
		Usage:     "store a message and print its id",
		ArgsUsage: "<team> (<to> | --all) [BODY|-]",
		UsageText: "inbox send <team> (<to> | --all) [BODY|-] [--from NAME] [--subject S] [--reply-to ID] [--json]",
		Description: "The body is the argument, or stdin when it is absent or '-'; '--' ends the flags.\n\n" +
			"Examples:\n" +
			"   inbox send myteam w1 --from lead -- \"fix the flaky test in pkg/x\"\n" +
			"   git diff | inbox send myteam reviewer --subject \"review this\"\n" +
			"   inbox send myteam --all --from lead -- \"stop and commit what you have\"",
		Flags: command.Common(
			&cli.StringFlag{Name: "from", Usage: "sender `NAME` (default $TEAMKIT_AGENT, else $USER, else human)"},
			&cli.StringFlag{Name: "subject", Usage: "one-line `SUBJECT`"},
			&cli.Int64Flag{Name: "reply-to", Usage: "`ID` of the message this answers"},
			&cli.BoolFlag{Name: "all", Usage: "one message to every agent recorded in the team (not the sender)"},
		),
		Action: func(c *cli.Context) error {
			o, err := parseSend(c, env)
			if err != nil {
				return err
			}
			return command.WithMailbox(c, env, o.run)
		},
	}
}

// sendOptions is one `inbox send`, parsed and checked, its body read.
type sendOptions struct {
	// Msg is the message to store; with All, its To is filled in per agent.
	Msg  mailbox.Message
	All  bool
	JSON bool
}

// sendArgs sorts send's positionals. With TEAMKIT_TEAM set (inside an agent),
// "send <to> <body>" may omit the team; two arguments are read as <team> <to>
// only when the first one is that team.
func sendArgs(env *command.Env, args []string, all bool) (team, to, body string, hasBody bool, err error) {
	envTeam := env.Getenv("TEAMKIT_TEAM")
	if all {
		// send <team> --all [BODY|-]; inside an agent the team may go.
		switch {
		case len(args) == 2:
			team, body, hasBody = args[0], args[1], true
		case len(args) == 1 && (envTeam == "" || args[0] == envTeam):
			team = args[0]
		case len(args) == 1:
			team, body, hasBody = envTeam, args[0], true
		case len(args) == 0 && envTeam != "":
			team = envTeam
		default:
			return "", "", "", false, command.Usagef("usage: inbox send <team> --all [BODY|-]")
		}
		if err := command.CheckName("team", team); err != nil {
			return "", "", "", false, err
		}
		if body == "-" {
			hasBody = false
		}
		return team, "", body, hasBody, nil
	}
	switch {
	case len(args) == 3:
		team, to, body, hasBody = args[0], args[1], args[2], true
	case len(args) == 2 && (envTeam == "" || args[0] == envTeam):
		team, to = args[0], args[1]
	case len(args) == 2:
		team, to, body, hasBody = envTeam, args[0], args[1], true
	case len(args) == 1 && envTeam != "":
		team, to = envTeam, args[0]
	default:
		return "", "", "", false, command.Usagef("usage: inbox send <team> <to> [BODY|-]")
	}
	if err := command.CheckName("team", team); err != nil {
		return "", "", "", false, err
	}
	if err := command.CheckName("agent", to); err != nil {
		return "", "", "", false, err
	}
	if body == "-" {
		hasBody = false
	}
	return team, to, body, hasBody, nil
}

// parseSend reads the command line, the sender from the environment and,
// when no BODY is given, the body from stdin.
func parseSend(c *cli.Context, env *command.Env) (*sendOptions, error) {
	all := c.Bool("all")
	team, to, body, hasBody, err := sendArgs(env, c.Args().Slice(), all)
	if err != nil {
		return nil, err
	}
	from := c.String("from")
	if from == "" {
		from = env.Getenv("TEAMKIT_AGENT")
	}
	if from == "" {
		if u := env.Getenv("USER"); names.Check("agent", u) == nil {
			from = u
		} else {
			from = "human"
		}
	}
	if err := command.CheckName("sender", from); err != nil {
		return nil, err
	}
	subject := c.String("subject")
	switch {
	case strings.ContainsAny(subject, "\r\n"):
		return nil, command.Usagef("--subject must be one line")
	case !utf8.ValidString(subject) || strings.IndexByte(subject, 0) >= 0:
		// As the body (mailbox.CheckBody): PostgreSQL would refuse it
		// at the write, and SQLite keep bytes no JSON can show.
		return nil, command.Usagef("--subject must be UTF-8 text, without NUL bytes")
	}
	if !hasBody {
		if env.StdinTTY {
			// Otherwise a forgotten BODY looks like a hang.
			fmt.Fprintln(env.Stderr, "inbox: reading the message body from stdin (end it with Ctrl-D on a line of its own)")
		}
		b, err := io.ReadAll(io.LimitReader(env.Stdin, mailbox.MaxBody+1))
		if err != nil {
			return nil, fmt.Errorf("read message body from stdin: %w", err)
		}
		body = string(b)
	}
	if err := mailbox.CheckBody(body); err != nil {
		hint := ""
		if err == mailbox.ErrEmptyBody && !hasBody {
			hint = "the body is read from stdin when no BODY argument is given"
		}
		return nil, command.WithHint(&command.Error{Code: command.ExitUsage, Err: err}, hint)
	}
	replyTo, err := replyToOf(c)
	if err != nil {
		return nil, err
	}
	return &sendOptions{
		Msg:  mailbox.Message{Team: team, From: from, To: to, Subject: subject, Body: body, ReplyTo: replyTo},
		All:  all,
		JSON: c.Bool("json"),
	}, nil
}

// run stores the message (one copy per agent with --all) and prints its id.
func (o *sendOptions) run(ctx context.Context, env *command.Env, db *mailbox.DB) error {
	msg := o.Msg
	if err := checkReplyTo(ctx, db, msg.Team, msg.ReplyTo); err != nil {
		return err
	}
	if o.All {
		return o.sendAll(ctx, env, db)
	}
	m, known, err := db.SendKnown(ctx, msg)
	if err != nil {
		return err
	}
	if !known && msg.ReplyTo == 0 {
		// Queuing before spawn is a feature; a misspelt name is not. (A
		// reply goes back to a sender, who need not be an agent.)
		fmt.Fprintf(env.Stderr, "inbox: note: queued for %s/%s, an agent not yet spawned in this team\n", msg.Team, msg.To)
	}
	if o.JSON {
		return command.JSON(env.Stdout, m)
	}
	return command.KV(env.Stdout, "id", fmt.Sprint(m.ID))
}

// sendAll queues one copy of the message per agent recorded in the team and
// prints one id=N to=NAME line (or JSON object) per copy.
func (o *sendOptions) sendAll(ctx context.Context, env *command.Env, db *mailbox.DB) error {
	msgs, err := db.SendAll(ctx, o.Msg)
	if errors.Is(err, mailbox.ErrNoAgents) {
		return command.WithHint(err, "send --all reaches the agents spawn recorded; list them with 'spawn list "+o.Msg.Team+"'")
	}
	if err != nil {
		return err
	}
	for _, m := range msgs {
		if o.JSON {
			err = command.JSON(env.Stdout, m)
		} else {
			err = command.KV(env.Stdout, "id", fmt.Sprint(m.ID), "to", m.To)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// replyToOf is --reply-to, 0 when not given; an id that cannot name a
// message is refused before the mailbox is opened.
func replyToOf(c *cli.Context) (int64, error) {
	id := c.Int64("reply-to")
	if c.IsSet("reply-to") && id <= 0 {
		return 0, command.Usagef("--reply-to %d: want the id of a message (id=N, as send printed it)", id)
	}
	return id, nil
}

// checkReplyTo refuses a --reply-to naming no message of the team: a reply
// to nothing would never be found by the dispatcher waiting for it. id 0
// is no --reply-to.
func checkReplyTo(ctx context.Context, db *mailbox.DB, team string, id int64) error {
	if id == 0 {
		return nil
	}
	m, err := db.Message(ctx, id)
	if errors.Is(err, mailbox.ErrNotFound) || (err == nil && m.Team != team) {
		return command.WithHint(command.Usagef("--reply-to %d: team %s has no message %d", id, team, id),
			"give the id that 'inbox send' printed (id=N)")
	}
	return err
}
