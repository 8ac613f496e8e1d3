// Package inbox is the inbox command: the team mailbox.
//
//	inbox send <team> <to> [BODY|-]   [--from NAME] [--subject S] [--reply-to ID]
//	inbox [drain] <team> <name>       [--peek] [--limit N] [--wait D] [--format T] [--json]
//	inbox list <team> [<name>]        [--all] [--json]
//
// send stores a message and prints its id; the body comes from the argument,
// or from stdin when it is absent or "-". drain (the default verb) prints the
// unread messages for <name>, oldest first, and marks them read after they
// are written, so a crash can repeat a message but never lose one. --wait
// blocks until a message arrives or the duration passes (then exit 2).
// Inside an agent, <team> and <name> default to TEAMKIT_TEAM and
// TEAMKIT_AGENT.
package inbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"text/template"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/teamkit/teamkit/pkg/command"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/names"
)

// App is the inbox command.
var App = command.App{Build: build, Default: "drain"}

// pollInterval bounds how late --wait notices a new message.
const pollInterval = 50 * time.Millisecond

func build(env *command.Env) *cli.App {
	drain := &cli.Command{
		Name:      "drain",
		Usage:     "print unread messages for <name>, oldest first, and mark them read",
		ArgsUsage: "<team> <name>",
		Flags: command.Common(
			&cli.BoolFlag{Name: "peek", Usage: "print without marking read"},
			&cli.IntFlag{Name: "limit", Usage: "at most `N` messages (0: all)"},
			&cli.DurationFlag{Name: "wait", Usage: "block up to `DURATION` for a message; exit 2 if none came"},
			&cli.StringFlag{Name: "format", Usage: "print each message with a Go `TEMPLATE` ({{.ID}} {{.From}} {{firstline .Body}} …)"},
		),
		Action: func(c *cli.Context) error { return runDrain(c, env) },
	}
	return &cli.App{
		Name:  "inbox",
		Usage: "the team mailbox: send, drain, list",
		Description: "Inside an agent started by spawn, <team> and <name> default to $TEAMKIT_TEAM and $TEAMKIT_AGENT.\n" +
			"Exit status: 0 done, 1 failure, 2 --wait passed with no message, 64 usage error.",
		Commands: []*cli.Command{
			{
				Name:      "send",
				Usage:     "store a message and print its id",
				ArgsUsage: "<team> <to> [BODY|-]",
				Flags: command.Common(
					&cli.StringFlag{Name: "from", Usage: "sender `NAME` (default $TEAMKIT_AGENT, else $USER)"},
					&cli.StringFlag{Name: "subject", Usage: "one-line `SUBJECT`"},
					&cli.Int64Flag{Name: "reply-to", Usage: "`ID` of the message this answers"},
				),
				Action: func(c *cli.Context) error { return runSend(c, env) },
			},
			drain,
			{
				Name:      "list",
				Usage:     "list unread messages (all with --all) without marking them",
				ArgsUsage: "<team> [<name>]",
				Flags:     command.Common(&cli.BoolFlag{Name: "all", Usage: "include messages already read"}),
				Action:    func(c *cli.Context) error { return runList(c, env) },
			},
		},
	}
}

// sendArgs sorts send's positionals. With TEAMKIT_TEAM set (inside an agent),
// "send <to> <body>" may omit the team; two arguments are read as <team> <to>
// only when the first one is that team.
func sendArgs(env *command.Env, args []string) (team, to, body string, hasBody bool, err error) {
	envTeam := env.Getenv("TEAMKIT_TEAM")
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

func runSend(c *cli.Context, env *command.Env) error {
	team, to, body, hasBody, err := sendArgs(env, c.Args().Slice())
	if err != nil {
		return err
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
		return err
	}
	subject := c.String("subject")
	if strings.ContainsAny(subject, "\r\n") {
		return command.Usagef("--subject must be one line")
	}
	if !hasBody {
		b, err := io.ReadAll(io.LimitReader(env.Stdin, mailbox.MaxBody+1))
		if err != nil {
			return fmt.Errorf("read message body from stdin: %w", err)
		}
		body = string(b)
	}
	if err := mailbox.CheckBody(body); err != nil {
		hint := ""
		if err == mailbox.ErrEmptyBody && !hasBody {
			hint = "the body is read from stdin when no BODY argument is given"
		}
		return command.WithHint(&command.Error{Code: command.ExitUsage, Err: err}, hint)
	}
	db, err := command.OpenMailbox(c.Context, c, env)
	if err != nil {
		return err
	}
	defer db.Close()
	m, err := db.Send(c.Context, mailbox.Message{Team: team, From: from, To: to, Subject: subject, Body: body, ReplyTo: c.Int64("reply-to")})
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return command.JSON(env.Stdout, m)
	}
	return command.KV(env.Stdout, "id", fmt.Sprint(m.ID))
}

func runDrain(c *cli.Context, env *command.Env) error {
	team, name, rest, err := command.Identity(env, c.Args().Slice(), 2)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return command.WithHint(command.Usagef("unexpected argument %q (usage: inbox [drain] <team> <name>)", rest[0]),
			"inbox's verbs are send, drain (the default) and list")
	}
	if c.Int("limit") < 0 {
		return command.Usagef("--limit must be 0 or more")
	}
	print, err := printer(c, env.Stdout)
	if err != nil {
		return err
	}
	db, err := command.OpenMailbox(c.Context, c, env)
	if err != nil {
		return err
	}
	defer db.Close()

	once := func() (bool, error) {
		if c.Bool("peek") {
			msgs, err := db.Peek(c.Context, team, name, c.Int("limit"))
			if err != nil {
				return false, err
			}
			return len(msgs) > 0, print(msgs)
		}
		msgs, err := db.Drain(c.Context, team, name, c.Int("limit"), print)
		return len(msgs) > 0, err
	}
	wait := c.Duration("wait")
	if wait <= 0 {
		_, err := once()
		return err
	}
	stop := command.Progress(env, "waiting for a message")
	got, err := db.Watch(c.Context, time.Now().Add(wait), pollInterval, once)
	stop()
	if err != nil {
		return err
	}
	if !got {
		fmt.Fprintf(env.Stderr, "inbox: no message for %s/%s within %s\n", team, name, wait)
		return command.Condition()
	}
	return nil
}

func runList(c *cli.Context, env *command.Env) error {
	args := c.Args().Slice()
	if len(args) > 2 {
		return command.Usagef("usage: inbox list <team> [<name>]")
	}
	team, to, _, err := command.Identity(env, args[:min(len(args), 1)], 1)
	if err != nil {
		return err
	}
	if len(args) == 2 {
		to = args[1]
		if err := command.CheckName("agent", to); err != nil {
			return err
		}
	}
	db, err := command.OpenMailbox(c.Context, c, env)
	if err != nil {
		return err
	}
	defer db.Close()
	msgs, err := db.List(c.Context, team, to, c.Bool("all"))
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return command.JSONLines(env.Stdout, msgs)
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tFROM\tTO\tCREATED\tREAD\tFIRST LINE")
	for _, m := range msgs {
		read := "-"
		if !m.ReadAt.IsZero() {
			read = command.FormatTime(m.ReadAt)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", m.ID, m.From, m.To, command.FormatTime(m.CreatedAt), read, FirstLine(m.Body, 60))
	}
	return tw.Flush()
}

// printer returns how drain writes a batch of messages: --json, --format, or
// the readable default. It writes the whole batch and flushes before
// returning, because the batch is marked read right after.
func printer(c *cli.Context, w io.Writer) (func([]mailbox.Message) error, error) {
	var tmpl *template.Template
	if f := c.String("format"); f != "" {
		var err error
		tmpl, err = template.New("format").Funcs(template.FuncMap{
			"firstline": func(s string) string { return FirstLine(s, 0) },
			"json": func(v any) (string, error) {
				var b strings.Builder
				err := command.JSON(&b, v)
				return strings.TrimSpace(b.String()), err
			},
		}).Parse(f)
		if err != nil {
			return nil, command.Usagef("--format: %v", err)
		}
	}
	asJSON := c.Bool("json")
	return func(msgs []mailbox.Message) error {
		var buf bytes.Buffer
		for _, m := range msgs {
			var err error
			switch {
			case asJSON:
				err = command.JSON(&buf, m)
			case tmpl != nil:
				if err = tmpl.Execute(&buf, m); err == nil {
					err = buf.WriteByte('\n')
				}
			default:
				err = writeMessage(&buf, m)
			}
			if err != nil {
				return fmt.Errorf("print message %d: %w", m.ID, err)
			}
		}
		return writeBounded(w, buf.Bytes())
	}, nil
}

// writeTimeout bounds how long a drain waits for its reader. The batch is
// written while the drain holds the mailbox's write lock (so the read mark
// can only follow a complete write), and a reader that stalls — a pager, a
// stuck pipe — must not hold every other command of the team at bay.
const writeTimeout = 5 * time.Second

// writeBounded writes data to w, giving up after writeTimeout when w is a
// pipe or terminal (files and buffers never block long).
func writeBounded(w io.Writer, data []byte) error {
	if f, ok := w.(*os.File); ok && f.SetWriteDeadline(time.Now().Add(writeTimeout)) == nil {
		defer f.SetWriteDeadline(time.Time{})
		if _, err := f.Write(data); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return fmt.Errorf("the reader of stdout took longer than %s; nothing was marked read", writeTimeout)
			}
			return err
		}
		return nil
	}
	_, err := w.Write(data)
	return err
}

// writeMessage is the readable form: a header line, then the body as sent.
func writeMessage(w io.Writer, m mailbox.Message) error {
	kv := []string{"id", fmt.Sprint(m.ID), "from", m.From, "to", m.To, "at", command.FormatTime(m.CreatedAt)}
	if m.Subject != "" {
		kv = append(kv, "subject", m.Subject)
	}
	if m.ReplyTo != 0 {
		kv = append(kv, "reply_to", fmt.Sprint(m.ReplyTo))
	}
	var hdr strings.Builder
	command.KV(&hdr, kv...)
	body := m.Body
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	_, err := io.WriteString(w, "--- "+hdr.String()+body)
	return err
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
