package inbox

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

func pruneCommand(env *command.Env) *cli.Command {
	return &cli.Command{
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
		Action: func(c *cli.Context) error {
			o, err := parsePrune(c, env)
			if err != nil {
				return err
			}
			return command.WithMailbox(c, env, o.run)
		},
	}
}

// pruneOptions is one `inbox prune`, parsed and checked.
type pruneOptions struct {
	Team   string
	Older  time.Duration
	DryRun bool
	JSON   bool
	// RunsDir holds the mailbox's run files on this host.
	RunsDir string
}

func parsePrune(c *cli.Context, env *command.Env) (*pruneOptions, error) {
	team, _, rest, err := command.Identity(env, c.Args().Slice(), 1)
	if err != nil {
		return nil, err
	}
	if len(rest) > 0 {
		return nil, command.Usagef("unexpected argument %q (usage: inbox prune <team> --older D)", rest[0])
	}
	older := command.Duration(c, "older")
	if c.IsSet("older") && older <= 0 {
		return nil, command.Usagef("--older %s: want a duration above 0", older)
	}
	if !c.IsSet("older") {
		return nil, command.WithHint(command.Usagef("missing --older D (a duration above 0)"), "inbox prune "+team+" --older 30d --dry-run")
	}
	return &pruneOptions{Team: team, Older: older, DryRun: c.Bool("dry-run"), JSON: c.Bool("json"), RunsDir: command.RunsDir(c, env)}, nil
}

// run removes the team's read messages sent more than --older ago, never
// an unread one, and the run files (briefings, logs) of runs that ended
// that long ago. Agent records stay: resume needs them, and they are one
// row each.
func (o *pruneOptions) run(ctx context.Context, env *command.Env, db *mailbox.DB) error {
	cutoff := env.Now().Add(-o.Older)
	msgs, err := db.PruneMessages(ctx, o.Team, cutoff, o.DryRun)
	if err != nil {
		return err
	}
	agents, err := db.Agents(ctx, o.Team)
	if err != nil {
		return err
	}
	files := []string{}
	for _, a := range agents {
		f, err := mailbox.OldRunFiles(o.RunsDir, a, cutoff)
		if err != nil {
			return err
		}
		files = append(files, f...)
	}
	if !o.DryRun {
		for _, f := range files {
			if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
				return fmt.Errorf("prune run files: %w", err)
			}
		}
	}
	if msgs == 0 && len(agents) == 0 {
		command.NoteUnknownTeam(ctx, env, "inbox", db, o.Team)
	}
	if o.JSON {
		return command.JSON(env.Stdout, struct {
			Team     string   `json:"team"`
			DryRun   bool     `json:"dry_run"`
			Messages int64    `json:"messages"`
			Files    []string `json:"files"`
		}{o.Team, o.DryRun, msgs, files})
	}
	verb := "pruned"
	if o.DryRun {
		verb = "would-prune"
	}
	return command.KV(env.Stdout, verb, o.Team, "messages", fmt.Sprint(msgs), "run_files", fmt.Sprint(len(files)), "older", o.Older.String())
}
