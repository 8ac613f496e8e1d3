package inbox

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

// runPrune removes a team's read messages sent more than --older ago, never
// an unread one, and the run files (briefings, logs) of runs that ended that
// long ago. Agent records stay: resume needs them, and they are one row each.
func runPrune(c *cli.Context, env *command.Env) error {
	team, _, rest, err := command.Identity(env, c.Args().Slice(), 1)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return command.Usagef("unexpected argument %q (usage: inbox prune <team> --older D)", rest[0])
	}
	older := command.Duration(c, "older")
	if c.IsSet("older") && older <= 0 {
		return command.Usagef("--older %s: want a duration above 0", older)
	}
	if !c.IsSet("older") {
		return command.WithHint(command.Usagef("missing --older D (a duration above 0)"), "inbox prune "+team+" --older 30d --dry-run")
	}
	dry := c.Bool("dry-run")
	db, err := command.OpenMailbox(c.Context, c, env)
	if err != nil {
		return err
	}
	defer db.Close()
	cutoff := env.Now().Add(-older)
	msgs, err := db.PruneMessages(c.Context, team, cutoff, dry)
	if err != nil {
		return err
	}
	agents, err := db.Agents(c.Context, team)
	if err != nil {
		return err
	}
	runsDir := command.RunsDir(c, env)
	files := []string{}
	for _, a := range agents {
		f, err := mailbox.OldRunFiles(runsDir, a, cutoff)
		if err != nil {
			return err
		}
		files = append(files, f...)
	}
	if !dry {
		for _, f := range files {
			if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
				return fmt.Errorf("prune run files: %w", err)
			}
		}
	}
	if msgs == 0 && len(agents) == 0 {
		command.NoteUnknownTeam(c.Context, env, "inbox", db, team)
	}
	if c.Bool("json") {
		return command.JSON(env.Stdout, struct {
			Team     string   `json:"team"`
			DryRun   bool     `json:"dry_run"`
			Messages int64    `json:"messages"`
			Files    []string `json:"files"`
		}{team, dry, msgs, files})
	}
	verb := "pruned"
	if dry {
		verb = "would-prune"
	}
	return command.KV(env.Stdout, verb, team, "messages", fmt.Sprint(msgs), "run_files", fmt.Sprint(len(files)), "older", older.String())
}
