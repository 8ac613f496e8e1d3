package inbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync/atomic"
	"text/template"
	"text/template/parse"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/text"
)

func drainCommand(env *command.Env) *cli.Command {
	return &cli.Command{
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
		Action: func(c *cli.Context) error {
			o, err := parseDrain(c, env)
			if err != nil {
				return err
			}
			return command.WithMailbox(c, env, o.run)
		},
	}
}

// drainOptions is one `inbox [drain]`, parsed and checked.
type drainOptions struct {
	Team, Name string
	Peek       bool
	Limit      int
	// Wait is how long to block for a message (0: not at all).
	Wait time.Duration
	// Waiting is --wait given, 0 included: no message by then is exit 2.
	Waiting bool
	// Lease is --lease (0: the mailbox's default).
	Lease   time.Duration
	ReplyTo int64
	JSON    bool
	// Format is the parsed --format template, nil for none.
	Format *template.Template
}

func parseDrain(c *cli.Context, env *command.Env) (*drainOptions, error) {
	team, name, rest, err := command.Identity(env, c.Args().Slice(), 2)
	if err != nil {
		return nil, err
	}
	if len(rest) > 0 {
		// "inbox sned t w1 hi": the first word was meant as a verb.
		if command.Implied(c) && c.NArg() > 2 {
			return nil, command.UnknownVerb(c.App, c.Args().First())
		}
		return nil, command.WithHint(command.Usagef("unexpected argument %q (usage: inbox [drain] <team> <name>)", rest[0]),
			"inbox's verbs are send, drain (the default), list and prune")
	}
	if c.Int("limit") < 0 {
		return nil, command.Usagef("--limit must be 0 or more")
	}
	wait := command.Duration(c, "wait")
	if wait < 0 {
		return nil, command.Usagef("--wait %s: want a duration of 0 or more", wait)
	}
	lease := command.Duration(c, "lease")
	if c.IsSet("lease") && lease <= 0 {
		return nil, command.Usagef("--lease %s: want a duration above 0", lease)
	}
	replyTo, err := replyToOf(c)
	if err != nil {
		return nil, err
	}
	tmpl, err := formatTemplate(c.String("format"))
	if err != nil {
		return nil, err
	}
	return &drainOptions{Team: team, Name: name, Peek: c.Bool("peek"), Limit: c.Int("limit"), Wait: wait, Waiting: c.IsSet("wait"), Lease: lease,
		ReplyTo: replyTo, JSON: c.Bool("json"), Format: tmpl}, nil
}

// run prints the unread messages (marking them read unless --peek), waiting
// up to --wait for the first; exit 2 when the wait passes with none.
func (o *drainOptions) run(ctx context.Context, env *command.Env, db *mailbox.DB) error {
	db.SetLease(o.Lease)
	// From the moment a claim holds messages, an interruption gives them
	// back (mailbox.DB.OnClaim); a drain that finds none catches nothing.
	db.OnClaim(func() { command.CatchSignals(ctx) })
	if err := checkReplyTo(ctx, db, o.Team, o.ReplyTo); err != nil {
		return err
	}
	print := o.printer(ctx, env)
	once := func() (bool, error) {
		if o.Peek {
			msgs, err := db.PeekReplies(ctx, o.Team, o.Name, o.ReplyTo, o.Limit)
			if err != nil {
				return false, err
			}
			return len(msgs) > 0, print(msgs)
		}
		var msgs []mailbox.Message
		var err error
		if o.ReplyTo != 0 {
			msgs, err = db.DrainReplies(ctx, o.Team, o.Name, o.ReplyTo, o.Limit, print)
		} else {
			msgs, err = db.Drain(ctx, o.Team, o.Name, o.Limit, print)
		}
		return len(msgs) > 0, err
	}
	noMessage := func() error {
		fmt.Fprintf(env.Stderr, "inbox: no message for %s/%s within %s\n", o.Team, o.Name, o.Wait)
		return command.Condition()
	}
	if o.Wait <= 0 {
		got, err := once()
		if err == nil && !got {
			command.NoteUnknownTeam(ctx, env, "inbox", db, o.Team)
			if o.Waiting { // --wait 0: the wait has passed, with no message
				return noMessage()
			}
		}
		return err
	}
	command.NoteUnknownTeam(ctx, env, "inbox", db, o.Team)
	command.CatchSignals(ctx)
	stop := command.Progress(env, "waiting for a message")
	got, err := db.WatchInbox(ctx, o.Team, o.Name, time.Now().Add(o.Wait), once)
	stop()
	if err != nil {
		return err
	}
	if !got {
		return noMessage()
	}
	return nil
}

// formatTemplate parses --format ("" for none).
func formatTemplate(f string) (*template.Template, error) {
	if f == "" {
		return nil, nil
	}
	tmpl, err := template.New("format").Funcs(template.FuncMap{
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
	err = checkFields(tmpl)
	if err == nil {
		err = tryFormat(tmpl)
	}
	if err != nil {
		return nil, command.WithHint(command.Usagef("--format: %v", err),
			"a message's fields are .ID .Team .From .To .Subject .Body .ReplyTo .CreatedAt .ReadAt")
	}
	return tmpl, nil
}

// checkFields reports a field tmpl names that a message does not have, in
// every branch, taken or not: tryFormat's one sample message takes one side
// of each if only. Where dot is the message (outside the body of a range or
// a with, whose dot is something else) and from $, each chain of fields is
// followed through the types of a message's fields and methods.
func checkFields(tmpl *template.Template) error {
	msg := reflect.TypeOf(mailbox.Message{})
	chain := func(n parse.Node, t reflect.Type, idents []string) error {
		for _, id := range idents {
			if t == nil { // not known here: left to the message
				return nil
			}
			next, ok := fieldType(t, id)
			if !ok {
				loc, at := tmpl.ErrorContext(n)
				return fmt.Errorf("template: %s: at <%s>: can't evaluate field %s in type %s", loc, at, id, t)
			}
			t = next
		}
		return nil
	}
	var walk func(n parse.Node, dot reflect.Type) error
	branch := func(b *parse.BranchNode, in, dot reflect.Type) error {
		if err := walk(b.Pipe, dot); err != nil {
			return err
		}
		if err := walk(b.List, in); err != nil {
			return err
		}
		return walk(b.ElseList, dot)
	}
	walk = func(n parse.Node, dot reflect.Type) error {
		switch n := n.(type) {
		case *parse.ListNode:
			if n != nil {
				for _, c := range n.Nodes {
					if err := walk(c, dot); err != nil {
						return err
					}
				}
			}
		case *parse.PipeNode:
			if n != nil {
				for _, c := range n.Cmds {
					if err := walk(c, dot); err != nil {
						return err
					}
				}
			}
		case *parse.CommandNode:
			for _, a := range n.Args {
				if err := walk(a, dot); err != nil {
					return err
				}
			}
		case *parse.ActionNode:
			return walk(n.Pipe, dot)
		case *parse.TemplateNode:
			return walk(n.Pipe, dot)
		case *parse.ChainNode: // (pipeline).Field: the pipeline's value is not known here
			return walk(n.Node, dot)
		case *parse.FieldNode:
			return chain(n, dot, n.Ident)
		case *parse.VariableNode:
			if n.Ident[0] == "$" {
				return chain(n, msg, n.Ident[1:])
			}
		case *parse.IfNode:
			return branch(&n.BranchNode, dot, dot)
		case *parse.RangeNode:
			return branch(&n.BranchNode, nil, dot)
		case *parse.WithNode:
			return branch(&n.BranchNode, nil, dot)
		}
		return nil
	}
	return walk(tmpl.Tree.Root, msg)
}

// fieldType is the type of t's field or method name as a template reaches
// it (nil when not known), and false when t has no such field or method.
func fieldType(t reflect.Type, name string) (reflect.Type, bool) {
	m, ok := t.MethodByName(name)
	if !ok && t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface {
		m, ok = reflect.PointerTo(t).MethodByName(name)
	}
	if ok {
		if m.Type.NumOut() == 0 {
			return nil, true
		}
		return m.Type.Out(0), true
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		if f, ok := t.FieldByName(name); ok && f.IsExported() {
			return f.Type, true
		}
		return nil, false
	case reflect.Map:
		return t.Elem(), true
	case reflect.Interface:
		return nil, true
	}
	return nil, false
}

// tryFormat runs tmpl once over a sample message and reports a field it
// names that a message does not have: a usage error now, not a failure
// (exit 1) at the first message, after an empty inbox had passed it. Any
// other error may be the sample's (an index past its short body), and a
// template still going after a second is left to the drain's own limits.
func tryFormat(tmpl *template.Template) error {
	sample := mailbox.Message{ID: 1, Team: "team", From: "lead", To: "w1", Subject: "subject", Body: "body\nmore",
		ReplyTo: 1, CreatedAt: time.Now(), ReadAt: time.Now()}
	done := make(chan error, 1)
	go func() { done <- tmpl.Execute(&capped{max: formatLimit}, sample) }()
	select {
	case err := <-done:
		if err != nil && strings.Contains(err.Error(), "can't evaluate field") {
			return err
		}
	case <-time.After(time.Second):
	}
	return nil
}

// printer returns how drain writes a batch of messages: --json, --format, or
// the readable default. It renders the whole batch, writes it and returns
// once it is written, because the batch is marked read right after. The
// drain holds no lock meanwhile (its messages are leased), so a slow reader
// costs only this drain; and it returns as soon as ctx ends (SIGTERM,
// Ctrl-C), whatever the template or the reader is doing.
func (o *drainOptions) printer(ctx context.Context, env *command.Env) func([]mailbox.Message) error {
	w := env.Stdout
	tmpl, asJSON := o.Format, o.JSON
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
	lease := o.Lease
	if lease <= 0 {
		lease = mailbox.DefaultLease
	}
	return func(msgs []mailbox.Message) error {
		out, err := renderWithin(ctx, msgs, lease, render)
		if err != nil {
			return err
		}
		return command.Interruptible(ctx, func() error {
			_, err := w.Write(out)
			return err
		})
	}
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
