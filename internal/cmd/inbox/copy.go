package inbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

func copyCommand(env *command.Env) *cli.Command {
	return &cli.Command{
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
		Action: func(c *cli.Context) error {
			o, err := parseCopy(c, env)
			if err != nil {
				return err
			}
			if from, _ := command.DBPath(c, env); mailbox.IsURL(from) {
				// Opening a PostgreSQL database that holds no mailbox would
				// make one there (migrate), which the next copy would then
				// copy, empty, as copied=yes: look without making anything.
				probe, err := mailbox.Open(c.Context, from, mailbox.Options{Now: env.Now, Existing: true})
				var me *mailbox.Error
				if errors.Is(err, mailbox.ErrNoMailbox) && errors.As(err, &me) {
					return noSource(me.Path)
				}
				if err == nil {
					probe.Close()
				}
			}
			return command.WithMailbox(c, env, o.run)
		},
	}
}

// copyOptions is one `inbox copy`, parsed and checked.
type copyOptions struct {
	JSON bool
	// OpenTarget opens (creating) the --to mailbox.
	OpenTarget func(context.Context) (*mailbox.DB, error)
}

func parseCopy(c *cli.Context, env *command.Env) (*copyOptions, error) {
	if c.NArg() > 0 {
		return nil, command.Usagef("unexpected argument %q (usage: inbox copy --to DB)", c.Args().First())
	}
	to := c.String("to")
	if to == "" {
		return nil, command.WithHint(command.Usagef("missing --to DB"), "inbox copy --to postgres://user@host/teamkit")
	}
	from, _ := command.DBPath(c, env)
	if sameMailbox(from, to) {
		return nil, command.Usagef("--to is the mailbox being copied")
	}
	if _, err := os.Stat(from); !mailbox.IsURL(from) && errors.Is(err, fs.ErrNotExist) {
		// Opening it would make an empty mailbox, and copy nothing.
		return nil, noSource(from)
	}
	return &copyOptions{
		JSON:       c.Bool("json"),
		OpenTarget: func(ctx context.Context) (*mailbox.DB, error) { return command.OpenMailboxAt(ctx, c, env, to, "--to") },
	}, nil
}

// sameMailbox reports whether a and b name one mailbox: the same text, or
// for files the same file however the path spells it ("./", "..", a link).
// Copying a mailbox into itself would wait on its own write lock.
func sameMailbox(a, b string) bool {
	if a == b {
		return true
	}
	if mailbox.IsURL(a) || mailbox.IsURL(b) {
		return false
	}
	if sa, err := os.Stat(a); err == nil {
		if sb, err := os.Stat(b); err == nil {
			return os.SameFile(sa, sb)
		}
	}
	aa, errA := filepath.Abs(a)
	ab, errB := filepath.Abs(b)
	return errA == nil && errB == nil && aa == ab
}

// noSource is copy's refusal of a source that holds no mailbox: a typo
// in --db or TEAMKIT_DB, most likely.
func noSource(from string) error {
	return command.WithHint(fmt.Errorf("%s: no mailbox to copy there", from),
		"give the mailbox to copy: inbox copy --db SOURCE --to DB")
}

// run copies the command's mailbox, src, into --to: how a team moves from
// SQLite to PostgreSQL (docs/SCALING.md). One line says what was copied.
func (o *copyOptions) run(ctx context.Context, env *command.Env, src *mailbox.DB) error {
	if src.Created() {
		// A PostgreSQL database that held no mailbox until now.
		return noSource(src.Path())
	}
	dst, err := o.OpenTarget(ctx)
	if err != nil {
		return err
	}
	defer dst.Close()
	if mailbox.Same(ctx, src, dst) {
		return command.Usagef("--to is the mailbox being copied")
	}
	counts, err := mailbox.Copy(ctx, src, dst)
	if err != nil {
		return err
	}
	if o.JSON {
		return command.JSON(env.Stdout, struct {
			From   string               `json:"from"`
			To     string               `json:"to"`
			Tables []mailbox.TableCount `json:"tables"`
		}{src.Path(), dst.Path(), counts})
	}
	kv := []string{"copied", "yes", "from", src.Path(), "to", dst.Path()}
	for _, t := range counts {
		kv = append(kv, t.Table, strconv.FormatInt(t.Rows, 10))
	}
	return command.KV(env.Stdout, kv...)
}
