package spawn

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/pkg/launch"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/roster"
	"github.com/teamkit/teamkit/pkg/spawn"
	"github.com/teamkit/teamkit/pkg/worktree"
)

func graceFlag() cli.Flag {
	f := command.DurationFlag("grace", "give a stopped agent `D` between SIGTERM and SIGKILL (10 = 10s)")
	f.DefaultText = launch.DefaultGrace.String()
	return f
}

func graceOf(c *cli.Context) (time.Duration, error) {
	if !c.IsSet("grace") {
		return launch.DefaultGrace, nil
	}
	g := command.Duration(c, "grace")
	if g <= 0 {
		return 0, command.Usagef("--grace must be positive")
	}
	return g, nil
}

// stopCommand is "spawn stop <team> (<name> | --all)".
func stopCommand(env *command.Env) *cli.Command {
	return &cli.Command{
		Name:      "stop",
		Usage:     "stop an agent (or every agent of a team): SIGTERM to all its processes, SIGKILL after the grace",
		ArgsUsage: "<team> (<name> | --all)",
		UsageText: "spawn stop <team> (<name> | --all) [--grace D] [--clean] [--json]",
		Description: "SIGTERM goes to every process of the agent's run (its children too), SIGKILL to what still runs after\n" +
			"the grace. Prints one line per agent: status=stopped … code=N (143 after SIGTERM, 137 after SIGKILL),\n" +
			"or status=not-running. An agent on another host is refused: stop it there.\n" +
			"--clean also removes the agent's worktree (spawn --worktree) and its branch, only when the branch has no commits\n" +
			"that are neither merged into the repository's HEAD nor pushed, and no uncommitted changes; else it says which (exit 1).\n" +
			"Exit status: 0 done (also when nothing was running), 1 failure, 64 usage error.\n\n" +
			"Examples:\n   spawn stop myteam w1\n   spawn stop myteam --all --grace 30s     # an emergency stop of the whole team",
		Flags: command.Common(
			&cli.BoolFlag{Name: "all", Usage: "stop every agent recorded in the team"},
			&cli.BoolFlag{Name: "clean", Usage: "remove the agent's worktree and branch too, if they hold no work"},
			graceFlag(),
		),
		Action: func(c *cli.Context) error {
			o, err := parseStop(c, env)
			if err != nil {
				return err
			}
			return command.WithMailbox(c, env, o.run)
		},
	}
}

// stopOptions is one `spawn stop`, parsed and checked.
type stopOptions struct {
	Team string
	// Name is the one agent stopped, "" with All.
	Name string
	All  bool
	JSON bool
	// Clean removes each stopped agent's worktree, if it holds no work.
	Clean bool
	Stop  spawn.StopOptions
}

func parseStop(c *cli.Context, env *command.Env) (*stopOptions, error) {
	want := 2
	if c.Bool("all") {
		want = 1
	}
	team, name, rest, err := command.Identity(env, c.Args().Slice(), want)
	if err != nil {
		return nil, err
	}
	if len(rest) > 0 {
		return nil, command.Usagef("unexpected argument %q (usage: spawn stop <team> (<name> | --all))", rest[0])
	}
	grace, err := graceOf(c)
	if err != nil {
		return nil, err
	}
	return &stopOptions{Team: team, Name: name, All: c.Bool("all"), JSON: c.Bool("json"), Clean: c.Bool("clean"),
		Stop: spawn.StopOptions{Host: roster.HostName(env.Getenv), Grace: grace, RunsDir: command.RunsDir(c, env)}}, nil
}

// run stops the agent (or the team's), printing one line per agent.
func (s *stopOptions) run(ctx context.Context, env *command.Env, db *mailbox.DB) error {
	team, name, o := s.Team, s.Name, s.Stop
	launch.RecordSpooled(ctx, db, o.RunsDir, team)
	var got []mailbox.Agent
	var errs []error
	if s.All {
		// All at once: one grace for the whole team, not one per agent.
		agents, err := db.Agents(ctx, team)
		if err != nil {
			return err
		}
		got, errs = spawn.StopAll(ctx, db, agents, o)
	} else {
		a, err := spawn.Stop(ctx, db, team, name, o)
		got, errs = []mailbox.Agent{a}, []error{err}
	}
	var failed error
	for i, a := range got {
		err := errs[i]
		switch {
		case errors.Is(err, spawn.ErrNotRunning):
			if err = reportStop(s.JSON, env, a, "not-running"); err == nil && s.Clean {
				err = clean(ctx, s.JSON, env, db, a)
			}
		case err == nil:
			if err = reportStop(s.JSON, env, a, "stopped"); err == nil && s.Clean {
				err = clean(ctx, s.JSON, env, db, a)
			}
		case errors.Is(err, mailbox.ErrNotFound):
			n := name
			if n == "" {
				n = a.Name
			}
			err = command.WithHint(err, fmt.Sprintf("no agent %s was ever spawned in team %s", n, team))
		}
		if err != nil {
			fmt.Fprintf(env.Stderr, "spawn: error: %v\n", err)
			if hint := stopHint(err); hint != "" {
				fmt.Fprintf(env.Stderr, "spawn: hint: %s\n", hint)
			}
			failed = err
		}
	}
	if failed != nil {
		return &command.Error{Code: command.ExitFailure, Err: failed, Quiet: true}
	}
	return nil
}

// stopHint is the hint for one agent's failure, printed under its error
// line as the command's own errors get theirs.
func stopHint(err error) string {
	var inUse *worktree.InUseError
	if errors.As(err, &inUse) {
		return fmt.Sprintf("merge or push branch %s first, or remove the worktree by hand (git worktree remove --force %s)", inUse.Branch, inUse.Path)
	}
	var ce *command.Error
	if errors.As(err, &ce) && ce.Hint != "" {
		return ce.Hint
	}
	var h command.Hinter
	if errors.As(err, &h) {
		return h.Hint()
	}
	return ""
}

func reportStop(asJSON bool, env *command.Env, a mailbox.Agent, status string) error {
	if asJSON {
		return command.JSON(env.Stdout, struct {
			Status string        `json:"status"`
			Agent  mailbox.Agent `json:"agent"`
		}{status, a})
	}
	code := "unknown"
	if a.ExitCode != nil {
		code = fmt.Sprint(*a.ExitCode)
	}
	return command.KV(env.Stdout, "status", status, "agent", a.Name, "team", a.Team, "run", a.Run, "code", code)
}

// clean removes the stopped agent a's worktree and branch (spawn stop
// --clean), refusing when they hold work (worktree.Remove), and prints
// "removed worktree=PATH branch=B". An agent without one has nothing to do.
func clean(ctx context.Context, asJSON bool, env *command.Env, db *mailbox.DB, a mailbox.Agent) error {
	if a.Worktree == "" {
		return nil
	}
	if _, err := os.Stat(a.Worktree); errors.Is(err, os.ErrNotExist) {
		// Removed by hand: only the record is left to clear.
		return db.ForgetWorktree(ctx, a.Team, a.Name, a.Run)
	}
	if err := worktree.Remove(ctx, a.Worktree, a.Branch); err != nil {
		return err
	}
	if err := db.ForgetWorktree(ctx, a.Team, a.Name, a.Run); err != nil {
		return err
	}
	if asJSON {
		return command.JSON(env.Stdout, struct {
			Status   string `json:"status"`
			Worktree string `json:"worktree"`
			Branch   string `json:"branch"`
		}{"removed", a.Worktree, a.Branch})
	}
	return command.KV(env.Stdout, "status", "worktree-removed", "agent", a.Name, "worktree", a.Worktree, "branch", a.Branch)
}
