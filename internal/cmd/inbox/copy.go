package inbox

import (
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

// runCopy copies the command's mailbox into --to: how a team moves from
// SQLite to PostgreSQL (docs/SCALING.md). One line says what was copied.
func runCopy(c *cli.Context, env *command.Env) error {
	if c.NArg() > 0 {
		return command.Usagef("unexpected argument %q (usage: inbox copy --to DB)", c.Args().First())
	}
	to := c.String("to")
	if to == "" {
		return command.WithHint(command.Usagef("missing --to DB"), "inbox copy --to postgres://user@host/teamkit")
	}
	if from, _ := command.DBPath(c, env); from == to {
		return command.Usagef("--to is the mailbox being copied")
	}
	src, err := command.OpenMailbox(c.Context, c, env)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := command.OpenMailboxAt(c.Context, c, env, to)
	if err != nil {
		return err
	}
	defer dst.Close()
	counts, err := mailbox.Copy(c.Context, src, dst)
	if err != nil {
		return err
	}
	if c.Bool("json") {
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
