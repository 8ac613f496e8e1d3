// Package inbox is the inbox command: the team mailbox.
//
//	inbox send <team> (<to> | --all) [BODY|-] [--from NAME] [--subject S] [--reply-to ID]
//	inbox [drain] <team> <name>       [--peek] [--limit N] [--wait D] [--reply-to ID] [--format T] [--json]
//	inbox list <team> [<name>]        [--all] [--json]
//	inbox prune <team> --older D      [--dry-run] [--json]
//
// send stores a message and prints its id; the body comes from the argument,
// or from stdin when it is absent or "-". drain (the default verb) prints the
// unread messages for <name>, oldest first, and marks them read after they
// are written, so a crash can repeat a message but never lose one. --wait
// blocks until a message arrives or the duration passes (then exit 2);
// --reply-to ID takes only the replies to message ID, so dispatchers sharing
// one inbox name never take each other's replies. send --all queues one copy
// per agent recorded in the team; prune removes old read messages and the run
// files of agents long exited.
// Inside an agent, <team> and <name> default to TEAMKIT_TEAM and
// TEAMKIT_AGENT.
//
// Internal: the commands' own code; no user should import it.
package inbox

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"text/template"
	"time"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/names"
	"github.com/teamkit/teamkit/pkg/text"
)

// App is the inbox command.
var App = command.App{Build: build, Default: "drain"}

func build(env *command.Env) *cli.App {
	drain := &cli.Command{
		Name:      "drain",
		Usage:     "print unread messages for <name>, oldest first, and mark them read",
		ArgsUsage: "<team> <name>",
		UsageText: "inbox [drain] <team> <name> [--peek] [--limit N] [--wait D] [--reply-to ID] [--format T] [--json]",
		Description: "Messages are written before the read mark commits: a crash can repeat one, never lose one.\n" +
			"No lock is held while they are written: a slow reader (a pager, a stalled pipe) delays only this drain.\n" +
			"Its messages are leased to it meanwhile (--lease, default 30s); a drain killed mid-way, or slower\n" +
			"than its lease, has them delivered again by the next drain.\n\n" +
			"Examples:\n" +
			"   inbox myteam w1                        # print unread messages, mark them read\n" +
			"   inbox myteam lead --wait 5m            # block until a message comes (exit 2 if none)\n" +
			"   inbox myteam dispatch --reply-to 17 --wait 10m   # only the reply to message 17\n" +
			"   inbox myteam w1 --peek --format '{{.ID}} {{.From}} {{firstline .Body}}'",
		Flags: command.Common(
			&cli.BoolFlag{Name: "peek", Usage: "print without marking read"},
			&cli.IntFlag{Name: "limit", Usage: "at most `N` messages (0: all)"},
			command.DurationFlag("wait", "block up to `DURATION` (60 = 60s, 10m, 1h) for a message; exit 2 if none came"),
			&cli.Int64Flag{Name: "reply-to", Usage: "only replies to message `ID` (what a dispatcher waits for)"},
			&cli.StringFlag{Name: "format", Usage: "print each message with a Go `TEMPLATE` ({{.ID}} {{.From}} {{firstline .Body}} …)"},
			command.DurationFlag("lease", "how long the messages being printed stay this drain's before another drain may take them again (default 30s)"),
		),
		Action: func(c *cli.Context) error { return runDrain(c, env) },
	}
	return &cli.App{
		Name:  "inbox",
		Usage: "the team mailbox: send, drain, list, prune, copy",
		UsageText: "inbox send <team> (<to> | --all) [BODY|-] [--from NAME] [--subject S] [--reply-to ID]\n" +
			"inbox [drain] <team> <name> [--peek] [--limit N] [--wait D] [--reply-to ID] [--format T] [--json]\n" +
			"inbox list <team> [<name>] [--all] [--json]\n" +
			"inbox prune <team> --older D [--dry-run] [--json]\n" +
			"inbox copy --to DB [--db SOURCE] [--json]",
		Description: "Inside an agent started by spawn, <team> and <name> default to $TEAMKIT_TEAM and $TEAMKIT_AGENT.\n" +
			"Durations: a plain number is seconds (60), else 90s, 10m, 1h, 30d.\n" +
			"Exit status: 0 done, 1 failure, 2 --wait passed with no message, 64 usage error.\n\n" +
			"Examples:\n" +
			"   inbox send myteam w1 --from lead -- \"fix the flaky test\"   # id=17\n" +
			"   inbox myteam w1                                           # drain w1's unread messages\n" +
			"   inbox list myteam --all --json",
		Commands: []*cli.Command{
			{
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
				Action: func(c *cli.Context) error { return runSend(c, env) },
			},
			drain,
			{
				Name:      "list",
				Usage:     "list unread messages (all with --all) without marking them",
				ArgsUsage: "<team> [<name>]",
				UsageText: "inbox list <team> [<name>] [--all] [--json]",
				Description: "Streamed from an index: its cost follows what is listed, not the team's history.\n\n" +
					"Examples:\n" +
					"   inbox list myteam            # every unread message of the team\n" +
					"   inbox list myteam w1 --all   # w1's whole history",
				Flags:  command.Common(&cli.BoolFlag{Name: "all", Usage: "include messages already read"}),
				Action: func(c *cli.Context) error { return runList(c, env) },
			},
			{
				Name:      "prune",
				Usage:     "remove read messages older than D, and the run files of agents exited that long ago",
				ArgsUsage: "<team>",
				UsageText: "inbox prune <team> --older D [--dry-run] [--json]",
				Description: "Never removes an unread message, a live run's files or an agent record.\n\n" +
					"Examples:\n" +
					"   inbox prune myteam --older 30d --dry-run\n" +
					"   inbox prune myteam --older 30d",
				Flags: command.Common(
					command.DurationFlag("older", "what to remove: older than `D` (30d, 12h; required)"),
					&cli.BoolFlag{Name: "dry-run", Usage: "say what would be removed, remove nothing"},
				),
				Action: func(c *cli.Context) error { return runPrune(c, env) },
			},
			{
				Name:      "copy",
				Usage:     "copy this mailbox, every team, into another (SQLite into PostgreSQL, say)",
				UsageText: "inbox copy --to DB [--db SOURCE] [--json]",
				Description: "Every message, agent, ask and setting, with their ids; the target must be empty.\n" +
					"The source is locked for writing while it is read; stop the team first (resume pause, agents done).\n\n" +
					"Examples:\n" +
					"   inbox copy --db ~/.local/state/teamkit/teamkit.db --to postgres://teamkit@db.internal/teamkit\n" +
					"   export TEAMKIT_DB=postgres://teamkit@db.internal/teamkit   # then point every host at it",
				Flags: command.Common(
					&cli.StringFlag{Name: "to", Usage: "the target mailbox: a `DB` path or postgres:// URL (required)"},
				),
				Action: func(c *cli.Context) error { return runCopy(c, env) },
			},
		},
	}
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

func runSend(c *cli.Context, env *command.Env) error {
	all := c.Bool("all")
	team, to, body, hasBody, err := sendArgs(env, c.Args().Slice(), all)
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
		if env.StdinTTY {
			// Otherwise a forgotten BODY looks like a hang.
			fmt.Fprintln(env.Stderr, "inbox: reading the message body from stdin (end it with Ctrl-D on a line of its own)")
		}
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
	replyTo := c.Int64("reply-to")
	if err := checkReplyTo(c, db, team, replyTo); err != nil {
		return err
	}
	msg := mailbox.Message{Team: team, From: from, To: to, Subject: subject, Body: body, ReplyTo: replyTo}
	if all {
		return sendAll(c, env, db, msg)
	}
	known, err := db.AgentKnown(c.Context, team, to)
	if err != nil {
		return err
	}
	m, err := db.Send(c.Context, msg)
	if err != nil {
		return err
	}
	if !known && replyTo == 0 {
		// Queuing before spawn is a feature; a misspelt name is not. (A
		// reply goes back to a sender, who need not be an agent.)
		fmt.Fprintf(env.Stderr, "inbox: note: queued for %s/%s, an agent not yet spawned in this team\n", team, to)
	}
	if c.Bool("json") {
		return command.JSON(env.Stdout, m)
	}
	return command.KV(env.Stdout, "id", fmt.Sprint(m.ID))
}

// sendAll queues one copy of msg per agent recorded in the team and prints
// one id=N to=NAME line (or JSON object) per copy.
func sendAll(c *cli.Context, env *command.Env, db *mailbox.DB, msg mailbox.Message) error {
	msgs, err := db.SendAll(c.Context, msg)
	if errors.Is(err, mailbox.ErrNoAgents) {
		return command.WithHint(err, "send --all reaches the agents spawn recorded; list them with 'spawn list "+msg.Team+"'")
	}
	if err != nil {
		return err
	}
	for _, m := range msgs {
		if c.Bool("json") {
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

// checkReplyTo refuses a --reply-to naming no message of the team: a reply
// to nothing would never be found by the dispatcher waiting for it.
func checkReplyTo(c *cli.Context, db *mailbox.DB, team string, id int64) error {
	if !c.IsSet("reply-to") {
		return nil
	}
	if id <= 0 {
		return command.Usagef("--reply-to %d: want the id of a message (id=N, as send printed it)", id)
	}
	m, err := db.Message(c.Context, id)
	if errors.Is(err, mailbox.ErrNotFound) || (err == nil && m.Team != team) {
		return command.WithHint(command.Usagef("--reply-to %d: team %s has no message %d", id, team, id),
			"give the id that 'inbox send' printed (id=N)")
	}
	return err
}

func runDrain(c *cli.Context, env *command.Env) error {
	team, name, rest, err := command.Identity(env, c.Args().Slice(), 2)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		// "inbox sned t w1 hi": the first word was meant as a verb.
		if command.Implied(c) && c.NArg() > 2 {
			return command.UnknownVerb(c.App, c.Args().First())
		}
		return command.WithHint(command.Usagef("unexpected argument %q (usage: inbox [drain] <team> <name>)", rest[0]),
			"inbox's verbs are send, drain (the default), list and prune")
	}
	if c.Int("limit") < 0 {
		return command.Usagef("--limit must be 0 or more")
	}
	wait := command.Duration(c, "wait")
	if wait < 0 {
		return command.Usagef("--wait %s: want a duration of 0 or more", wait)
	}
	lease := command.Duration(c, "lease")
	if c.IsSet("lease") && lease <= 0 {
		return command.Usagef("--lease %s: want a duration above 0", lease)
	}
	replyTo := c.Int64("reply-to")
	print, err := printer(c, env)
	if err != nil {
		return err
	}
	db, err := command.OpenMailbox(c.Context, c, env)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetLease(lease)
	if err := checkReplyTo(c, db, team, replyTo); err != nil {
		return err
	}

	once := func() (bool, error) {
		if c.Bool("peek") {
			msgs, err := db.PeekReplies(c.Context, team, name, replyTo, c.Int("limit"))
			if err != nil {
				return false, err
			}
			return len(msgs) > 0, print(msgs)
		}
		var msgs []mailbox.Message
		var err error
		if replyTo != 0 {
			msgs, err = db.DrainReplies(c.Context, team, name, replyTo, c.Int("limit"), print)
		} else {
			msgs, err = db.Drain(c.Context, team, name, c.Int("limit"), print)
		}
		return len(msgs) > 0, err
	}
	if wait <= 0 {
		got, err := once()
		if err == nil && !got {
			command.NoteUnknownTeam(c.Context, env, "inbox", db, team)
		}
		return err
	}
	command.NoteUnknownTeam(c.Context, env, "inbox", db, team)
	stop := command.Progress(env, "waiting for a message")
	got, err := db.WatchInbox(c.Context, team, name, time.Now().Add(wait), once)
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
	// Streamed: one message in memory at a time, whatever the history.
	out := bufio.NewWriter(command.Writer(c.Context, env.Stdout))
	var table *listTable
	if !c.Bool("json") {
		table = &listTable{w: out, show: env.Show}
	}
	n := 0
	err = db.ListEach(c.Context, team, to, c.Bool("all"), func(m mailbox.Message) error {
		n++
		if table == nil {
			return command.JSON(out, m)
		}
		return table.add(m)
	})
	if err != nil {
		return err
	}
	if table != nil {
		if err := table.flush(); err != nil {
			return err
		}
	}
	if n == 0 {
		command.NoteUnknownTeam(c.Context, env, "inbox", db, team)
	}
	return out.Flush()
}

// listTable prints inbox list's table as it streams: the first rows are
// held back to size the columns, then every row is written at once with
// those widths (a longer value later only pushes its own row out).
type listTable struct {
	w       io.Writer
	show    func(string) string
	pending [][]string
	widths  []int
	started bool
}

// listSample is how many rows size the table's columns.
const listSample = 256

func (t *listTable) add(m mailbox.Message) error {
	read := "-"
	if !m.ReadAt.IsZero() {
		read = command.FormatTime(m.ReadAt)
	}
	row := []string{fmt.Sprint(m.ID), m.From, m.To, command.FormatTime(m.CreatedAt), read, t.show(text.FirstLine(m.Body, 60))}
	if t.started {
		return t.write(row)
	}
	t.pending = append(t.pending, row)
	if len(t.pending) >= listSample {
		return t.flush()
	}
	return nil
}

func (t *listTable) flush() error {
	if t.started {
		return nil
	}
	t.started = true
	head := []string{"ID", "FROM", "TO", "CREATED", "READ", "FIRST LINE"}
	t.widths = make([]int, len(head))
	for _, r := range append([][]string{head}, t.pending...) {
		for i, v := range r {
			t.widths[i] = max(t.widths[i], utf8.RuneCountInString(v))
		}
	}
	for _, r := range append([][]string{head}, t.pending...) {
		if err := t.write(r); err != nil {
			return err
		}
	}
	t.pending = nil
	return nil
}

func (t *listTable) write(row []string) error {
	var b strings.Builder
	for i, v := range row {
		b.WriteString(v)
		if i < len(row)-1 {
			b.WriteString(strings.Repeat(" ", max(t.widths[i]-utf8.RuneCountInString(v), 0)+2))
		}
	}
	b.WriteByte('\n')
	_, err := io.WriteString(t.w, b.String())
	return err
}

// printer returns how drain writes a batch of messages: --json, --format, or
// the readable default. It renders the whole batch, writes it and returns
// once it is written, because the batch is marked read right after. The
// drain holds no lock meanwhile (its messages are leased), so a slow reader
// costs only this drain; and it returns as soon as ctx ends (SIGTERM,
// Ctrl-C), whatever the template or the reader is doing.
func printer(c *cli.Context, env *command.Env) (func([]mailbox.Message) error, error) {
	w := env.Stdout
	var tmpl *template.Template
	if f := c.String("format"); f != "" {
		var err error
		tmpl, err = template.New("format").Funcs(template.FuncMap{
			"firstline": func(s string) string { return text.FirstLine(s, 0) },
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
	render := func(msgs []mailbox.Message, at *atomic.Int64) ([]byte, error) {
		var buf bytes.Buffer
		for i, m := range msgs {
			at.Store(int64(i))
			var err error
			switch {
			case asJSON:
				err = command.JSON(&buf, m)
			case tmpl != nil:
				one := &capped{max: formatLimit}
				if err = tmpl.Execute(one, m); err == nil {
					buf.WriteString(env.Show(one.String()))
					err = buf.WriteByte('\n')
				} else if one.over {
					return nil, command.WithHint(
						fmt.Errorf("--format printed more than %d MiB for message %d; nothing was marked read", formatLimit>>20, m.ID),
						"a template prints each message once: loop over less (or print .Body itself)")
				}
			default:
				err = writeMessage(&buf, m, env.Show)
			}
			if err != nil {
				return nil, fmt.Errorf("print message %d: %w", m.ID, err)
			}
		}
		return buf.Bytes(), nil
	}
	// The batch is leased to this drain for --lease: a render still going
	// when the lease runs out would let the next drain take the same
	// messages (to spin on them too, for a --format template that loops
	// without printing, which formatLimit never stops).
	lease := command.Duration(c, "lease")
	if lease <= 0 {
		lease = mailbox.DefaultLease
	}
	return func(msgs []mailbox.Message) error {
		out, err := renderWithin(c.Context, msgs, lease, render)
		if err != nil {
			return err
		}
		return command.Interruptible(c.Context, func() error {
			_, err := w.Write(out)
			return err
		})
	}, nil
}

// renderWithin runs render off this goroutine and returns what it made, or
// an error once the batch's lease is spent, or ctx's error as soon as ctx
// ends. A render given up on runs on unobserved until the process exits,
// which it is about to (see command.Interruptible).
func renderWithin(ctx context.Context, msgs []mailbox.Message, lease time.Duration, render func([]mailbox.Message, *atomic.Int64) ([]byte, error)) ([]byte, error) {
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	var at atomic.Int64
	go func() {
		out, err := render(msgs, &at)
		done <- result{out, err}
	}()
	t := time.NewTimer(lease)
	defer t.Stop()
	select {
	case r := <-done:
		return r.out, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return nil, command.WithHint(
			fmt.Errorf("--format did not finish message %d within the drain's %s lease; nothing was marked read", msgs[at.Load()].ID, lease),
			"a template prints each message once: loop over less (or print .Body itself); --lease gives a drain longer")
	}
}

// formatLimit bounds what --format may print for one message: four times
// the largest body, room for any template that prints a message's fields
// (even as JSON) and a few times over; a template that loops without end
// is cut off here instead of filling memory.
const formatLimit = 4 * mailbox.MaxBody

// capped is a strings.Builder that refuses to grow past max bytes; the
// template stops at the refused write.
type capped struct {
	strings.Builder
	max  int
	over bool
}

var errCapped = errors.New("output limit reached")

func (c *capped) Write(p []byte) (int, error) {
	if c.Len()+len(p) > c.max {
		c.over = true
		return 0, errCapped
	}
	return c.Builder.Write(p)
}

func (c *capped) WriteString(s string) (int, error) {
	if c.Len()+len(s) > c.max {
		c.over = true
		return 0, errCapped
	}
	return c.Builder.WriteString(s)
}

// writeMessage is the readable form: a header line, then the body as sent
// (through show, which escapes it on a terminal).
func writeMessage(w io.Writer, m mailbox.Message, show func(string) string) error {
	kv := []string{"id", fmt.Sprint(m.ID), "from", m.From, "to", m.To, "at", command.FormatTime(m.CreatedAt)}
	if m.Subject != "" {
		kv = append(kv, "subject", m.Subject)
	}
	if m.ReplyTo != 0 {
		kv = append(kv, "reply_to", fmt.Sprint(m.ReplyTo))
	}
	var hdr strings.Builder
	command.KV(&hdr, kv...)
	body := show(m.Body)
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	_, err := io.WriteString(w, "--- "+hdr.String()+body)
	return err
}
