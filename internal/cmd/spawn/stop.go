package spawn

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/pkg/launch"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/roster"
	"github.com/teamkit/teamkit/pkg/spawn"
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
		UsageText: "spawn stop <team> (<name> | --all) [--grace D] [--json]",
		Description: "SIGTERM goes to every process of the agent's run (its children too), SIGKILL to what still runs after\n" +
			"the grace. Prints one line per agent: status=stopped … code=N (143 after SIGTERM, 137 after SIGKILL),\n" +
			"or status=not-running. An agent on another host is refused: stop it there.\n" +
			"Exit status: 0 done (also when nothing was running), 1 failure, 64 usage error.\n\n" +
			"Examples:\n   spawn stop myteam w1\n   spawn stop myteam --all --grace 30s     # an emergency stop of the whole team",
		Flags: command.Common(
			&cli.BoolFlag{Name: "all", Usage: "stop every agent recorded in the team"},
			graceFlag(),
		),
		Action: func(c *cli.Context) error { return command.ParseThenRun(c, env, parseStop, (*stopOptions).run) },
	}
}

// stopOptions is one `spawn stop`, parsed and checked.
type stopOptions struct {
	Team string
	// Name is the one agent stopped, "" with All.
	Name string
	All  bool
	JSON bool
	Stop spawn.StopOptions
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
	return &stopOptions{Team: team, Name: name, All: c.Bool("all"), JSON: c.Bool("json"),
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
			err = reportStop(s.JSON, env, a, "not-running")
		case err == nil:
			err = reportStop(s.JSON, env, a, "stopped")
		case errors.Is(err, mailbox.ErrNotFound):
			n := name
			if n == "" {
				n = a.Name
			}
			err = command.WithHint(err, fmt.Sprintf("no agent %s was ever spawned in team %s", n, team))
		}
		if err != nil {
			fmt.Fprintf(env.Stderr, "spawn: error: %v\n", err)
			failed = err
		}
	}
	if failed != nil {
		return &command.Error{Code: command.ExitFailure, Err: failed, Quiet: true}
	}
	return nil
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
