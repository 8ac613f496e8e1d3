// Package ready is the ready command: the one-shot readiness sentinel.
//
//	ready mark|check|clear <team> <name> [--run RUN]
//
// An agent runs "ready mark" once its identity is claimed and it can work.
// The mark carries the run it belongs to ($TEAMKIT_RUN), so a mark left by an
// earlier launch never counts for a new one. "check" exits 0 when the agent's
// current run has marked, 2 when not; "clear" removes the mark. Inside an
// agent, <team> and <name> default to $TEAMKIT_TEAM and $TEAMKIT_AGENT.
//
// Internal: the commands' own code; no user should import it.
package ready

import (
	"errors"

	"github.com/urfave/cli/v2"

	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

// App is the ready command.
var App = command.App{Build: build}

func build(env *command.Env) *cli.App {
	runFlag := &cli.StringFlag{Name: "run", Usage: "the launch `RUN` id (default $TEAMKIT_RUN)"}
	verb := func(name, usage string, fn func(*cli.Context, *command.Env, *mailbox.DB, string, string) error) *cli.Command {
		return &cli.Command{
			Name: name, Usage: usage, ArgsUsage: "<team> <name>",
			UsageText:   "ready " + name + " <team> <name> [--run RUN] [--json]",
			Description: "Example:\n   ready " + name + " myteam w1      # inside an agent: ready " + name,
			Flags:       command.Common(runFlag),
			Action: func(c *cli.Context) error {
				team, name, rest, err := command.Identity(env, c.Args().Slice(), 2)
				if err != nil {
					return err
				}
				if len(rest) > 0 {
					return command.Usagef("unexpected argument %q", rest[0])
				}
				db, err := command.OpenMailbox(c.Context, c, env)
				if err != nil {
					return err
				}
				defer db.Close()
				return fn(c, env, db, team, name)
			},
		}
	}
	return &cli.App{
		Name:      "ready",
		Usage:     "the one-shot readiness sentinel an agent marks once it can work",
		UsageText: "ready mark|check|clear <team> <name> [--run RUN] [--json]",
		Description: "Inside an agent started by spawn, <team> <name> and the run default to $TEAMKIT_TEAM, $TEAMKIT_AGENT, $TEAMKIT_RUN.\n" +
			"Exit status: 0 done (check: marked), 2 check: not marked, 1 failure, 64 usage error.\n\n" +
			"Examples:\n" +
			"   ready mark                        # what an agent runs once it can work\n" +
			"   ready check myteam w1 && echo up",
		Commands: []*cli.Command{
			verb("mark", "mark this agent's run ready", mark),
			verb("check", "exit 0 if the agent's current run has marked ready, 2 if not", check),
			verb("clear", "remove the mark", clear),
		},
	}
}

func runOf(c *cli.Context, env *command.Env) string {
	if r := c.String("run"); r != "" {
		return r
	}
	return env.Getenv("TEAMKIT_RUN")
}

func mark(c *cli.Context, env *command.Env, db *mailbox.DB, team, name string) error {
	run := runOf(c, env)
	if err := db.MarkReady(c.Context, team, name, run); err != nil {
		return err
	}
	if c.Bool("json") {
		return command.JSON(env.Stdout, map[string]any{"team": team, "name": name, "run": run, "ready": true})
	}
	return command.KV(env.Stdout, "ready", "marked", "team", team, "name", name, "run", run)
}

// check compares the mark with the run that counts: --run or $TEAMKIT_RUN
// when given, else the agent's latest recorded launch; a mark of any run
// counts only for an agent spawn never recorded.
func check(c *cli.Context, env *command.Env, db *mailbox.DB, team, name string) error {
	want := runOf(c, env)
	if want == "" {
		a, err := db.Agent(c.Context, team, name)
		switch {
		case err == nil:
			want = a.Run
		case !errors.Is(err, mailbox.ErrNotFound):
			return err
		}
	}
	m, ok, err := db.Ready(c.Context, team, name)
	if err != nil {
		return err
	}
	marked := ok && (want == "" || m.Run == want)
	if c.Bool("json") {
		out := map[string]any{"team": team, "name": name, "run": want, "ready": marked}
		if ok {
			out["mark"] = m
		}
		if err := command.JSON(env.Stdout, out); err != nil {
			return err
		}
	} else {
		kv := []string{"ready", "no", "team", team, "name", name}
		switch {
		case marked:
			kv[1] = "yes"
			kv = append(kv, "run", m.Run, "marked_at", command.FormatTime(m.MarkedAt))
		case ok:
			kv = append(kv, "mark_run", m.Run, "want_run", want)
		}
		if err := command.KV(env.Stdout, kv...); err != nil {
			return err
		}
	}
	if !marked {
		return command.Condition()
	}
	return nil
}

func clear(c *cli.Context, env *command.Env, db *mailbox.DB, team, name string) error {
	if err := db.ClearReady(c.Context, team, name); err != nil {
		return err
	}
	if c.Bool("json") {
		return command.JSON(env.Stdout, map[string]any{"team": team, "name": name, "ready": false})
	}
	return command.KV(env.Stdout, "ready", "cleared", "team", team, "name", name)
}
