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
	"context"

	"github.com/urfave/cli/v2"

	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

// App is the ready command.
var App = command.App{Build: build, Quick: []string{"mark", "check", "clear"}}

func build(env *command.Env) *cli.App {
	runFlag := &cli.StringFlag{Name: "run", Usage: "the launch `RUN` id (default $TEAMKIT_RUN)"}
	verb := func(name, usage string, fn func(*Options, context.Context, *command.Env, *mailbox.DB) error) *cli.Command {
		return &cli.Command{
			Name: name, Usage: usage, ArgsUsage: "<team> <name>",
			UsageText:   "ready " + name + " <team> <name> [--run RUN] [--json]",
			Description: "Example:\n   ready " + name + " myteam w1      # inside an agent: ready " + name,
			Flags:       command.Common(runFlag),
			Action: func(c *cli.Context) error {
				o, err := parse(c, env)
				if err != nil {
					return err
				}
				return command.WithMailbox(c, env, func(ctx context.Context, env *command.Env, db *mailbox.DB) error { return fn(o, ctx, env, db) })
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
			verb("mark", "mark this agent's run ready", (*Options).mark),
			verb("check", "exit 0 if the agent's current run has marked ready, 2 if not", (*Options).check),
			verb("clear", "remove the mark", (*Options).clear),
		},
	}
}

// Options is one ready verb's command line, parsed and checked: the three
// verbs take the same one, and each runs it its own way.
type Options struct {
	Team, Name string
	// Run is --run, else $TEAMKIT_RUN ("" when neither is given).
	Run  string
	JSON bool
}

func parse(c *cli.Context, env *command.Env) (*Options, error) {
	team, name, rest, err := command.Identity(env, c.Args().Slice(), 2)
	if err != nil {
		return nil, err
	}
	if len(rest) > 0 {
		return nil, command.Usagef("unexpected argument %q", rest[0])
	}
	run := c.String("run")
	// $TEAMKIT_RUN is the run of the agent the environment names: inside
	// agent lead, `ready check crew w1` is about w1, whose mark never
	// carries lead's run.
	other := func(key, val string) bool { v := env.Getenv(key); return v != "" && v != val }
	if run == "" && !other("TEAMKIT_TEAM", team) && !other("TEAMKIT_AGENT", name) {
		run = env.Getenv("TEAMKIT_RUN")
	}
	return &Options{Team: team, Name: name, Run: run, JSON: c.Bool("json")}, nil
}

func (o *Options) mark(ctx context.Context, env *command.Env, db *mailbox.DB) error {
	team, name, run := o.Team, o.Name, o.Run
	if err := db.MarkReady(ctx, team, name, run); err != nil {
		return err
	}
	if o.JSON {
		return command.JSON(env.Stdout, map[string]any{"team": team, "name": name, "run": run, "ready": true})
	}
	return command.KV(env.Stdout, "ready", "marked", "team", team, "name", name, "run", run)
}

// check compares the mark with the run that counts: --run or $TEAMKIT_RUN
// when given, else the agent's latest recorded launch; a mark of any run
// counts only for an agent spawn never recorded.
func (o *Options) check(ctx context.Context, env *command.Env, db *mailbox.DB) error {
	team, name, want := o.Team, o.Name, o.Run
	m, ok, run, err := db.ReadyOf(ctx, team, name)
	if err != nil {
		return err
	}
	if want == "" {
		want = run
	}
	marked := ok && (want == "" || m.Run == want)
	if o.JSON {
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

func (o *Options) clear(ctx context.Context, env *command.Env, db *mailbox.DB) error {
	team, name := o.Team, o.Name
	if err := db.ClearReady(ctx, team, name); err != nil {
		return err
	}
	if o.JSON {
		return command.JSON(env.Stdout, map[string]any{"team": team, "name": name, "ready": false})
	}
	return command.KV(env.Stdout, "ready", "cleared", "team", team, "name", name)
}
