package spawn

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/pkg/launch"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/roster"
	"github.com/teamkit/teamkit/pkg/text"
)

// The runs verb: every run's record, what it used and how it ended.

func runsCommand(env *command.Env) *cli.Command {
	return &cli.Command{
		Name:      "runs",
		Usage:     "the history of a team's (or one agent's) runs: how each ended, its tokens and cost, with totals",
		ArgsUsage: "<team> [<name>]",
		UsageText: "spawn runs <team> [<name>] [--since D] [--json]",
		Description: "END is done, failed-auth, usage-limit, rate-limited, model-error, crashed, stopped, timeout or budget\n" +
			"(\"running\" while the run goes on); DETAIL is the agent CLI's own reason. TOKENS are input + output +\n" +
			"cache read + cache write, as the model reported them on the CLI's stream; COST is what the CLI reported\n" +
			"(claude and opencode do; \"-\" otherwise). Totals follow, per agent and for the team. --json prints one\n" +
			"record per line (team, name, run, type, started_at, ended_at, end, detail, exit_code, session,\n" +
			"resets_at, tokens {input, output, cache_read, cache_write}, cost_usd) and no totals.\n\n" +
			"Examples:\n   spawn runs myteam\n   spawn runs myteam w1 --since 24h\n" +
			"   spawn runs myteam --json | jq -s 'map(.tokens.output) | add'",
		Flags:  append(command.Common(), command.DurationFlag("since", "only runs started within this long (24h, 7d)")),
		Action: func(c *cli.Context) error { return runRuns(c, env) },
	}
}

// runsOptions is one spawn runs: whose runs, since when, and how shown.
type runsOptions struct {
	Team, Name string
	Since      time.Time
	JSON       bool
	RunsDir    string
	// Host names this host, where a run without an end is judged.
	Host string
}

func runRuns(c *cli.Context, env *command.Env) error {
	o, err := parseRuns(c, env)
	if err != nil {
		return err
	}
	return command.WithMailbox(c, env, o.run)
}

func parseRuns(c *cli.Context, env *command.Env) (*runsOptions, error) {
	team, _, rest, err := command.Identity(env, c.Args().Slice(), 1)
	if err != nil {
		return nil, err
	}
	o := &runsOptions{Team: team, JSON: c.Bool("json"), RunsDir: command.RunsDir(c, env), Host: roster.HostName(env.Getenv)}
	if len(rest) > 0 {
		if err := command.CheckName("agent", rest[0]); err != nil {
			return nil, err
		}
		o.Name, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 {
		return nil, command.Usagef("unexpected argument %q (usage: spawn runs <team> [<name>])", rest[0])
	}
	switch d := command.Duration(c, "since"); {
	case d < 0:
		return nil, command.Usagef("--since %s: want a duration of 0 or more", d)
	case d > 0:
		o.Since = env.Now().Add(-d)
	}
	return o, nil
}

func (o *runsOptions) run(ctx context.Context, env *command.Env, db *mailbox.DB) error {
	team, name := o.Team, o.Name
	launch.RecordSpooled(ctx, db, o.RunsDir, team)
	runs, err := db.Runs(ctx, team, name, o.Since)
	if err != nil {
		return err
	}
	if o.JSON {
		return command.JSONLines(env.Stdout, runs)
	}
	if len(runs) == 0 {
		fmt.Fprintf(env.Stderr, "spawn: note: no runs recorded for %s\n", strings.TrimSuffix(team+"/"+name, "/"))
		return nil
	}
	tw := env.Table(env.Stdout, "NAME", "RUN", "TYPE", "STARTED", "TOOK", "END", "TOKENS", "COST", "SESSION", "DETAIL")
	type total struct {
		runs   int
		tokens mailbox.Tokens
		cost   *float64
	}
	perAgent := map[string]*total{}
	var all total
	unended, err := o.unended(ctx, db, runs)
	if err != nil {
		return err
	}
	for _, r := range runs {
		end, took := r.End, "-"
		if r.EndedAt != nil {
			took = r.EndedAt.Sub(r.StartedAt).Round(time.Second).String()
		}
		if end == "" {
			end = unended(r)
		}
		detail := r.Detail
		if r.ResetsAt != nil {
			detail = strings.TrimPrefix(detail+"; resets "+command.FormatTime(*r.ResetsAt), "; ")
		}
		tw.Row(r.Name, r.Run, r.Type, command.FormatTime(r.StartedAt), took, end,
			tokensOf(r.Tokens), costOf(r.CostUSD), orDash(r.Session), orDash(text.FirstLine(detail, 60)))
		t := perAgent[r.Name]
		if t == nil {
			t = &total{}
			perAgent[r.Name] = t
		}
		for _, t := range []*total{t, &all} {
			t.runs++
			t.tokens = t.tokens.Add(r.Tokens)
			if r.CostUSD != nil {
				c := *r.CostUSD
				if t.cost != nil {
					c += *t.cost
				}
				t.cost = &c
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	names := make([]string, 0, len(perAgent))
	for n := range perAgent {
		names = append(names, n)
	}
	sort.Strings(names)
	line := func(who string, t *total) {
		fmt.Fprintf(env.Stdout, "total %s: %d run(s), %s tokens (input %d, output %d, cache read %d, cache write %d), cost %s\n",
			who, t.runs, tokensOf(t.tokens), t.tokens.Input, t.tokens.Output, t.tokens.CacheRead, t.tokens.CacheWrite, costOf(t.cost))
	}
	for _, n := range names {
		line(team+"/"+n, perAgent[n])
	}
	if name == "" {
		line("team "+team, &all)
	}
	return nil
}

// unended returns what END says of a run with no end recorded: "running"
// while spawn list would call its agent running (ready, starting), else
// the state spawn list shows (lost, exited…): a run whose machine died
// never records its end. A run its agent has since left for a later one
// is "lost".
func (o *runsOptions) unended(ctx context.Context, db *mailbox.DB, runs []mailbox.RunRecord) (func(mailbox.RunRecord) string, error) {
	agents := map[string]*mailbox.Agent{}
	var here roster.Here
	if slices.ContainsFunc(runs, func(r mailbox.RunRecord) bool { return r.End == "" }) {
		list, err := db.AgentsWithoutTasks(ctx, o.Team)
		if err != nil {
			return nil, err
		}
		for i := range list {
			agents[list[i].Name] = &list[i]
		}
		if here, err = roster.At(ctx, db, o.Host); err != nil {
			return nil, err
		}
	}
	return func(r mailbox.RunRecord) string {
		a := agents[r.Name]
		if a == nil || a.Run != r.Run {
			return roster.Lost
		}
		switch s, _ := roster.State(a, nil, here); s {
		case roster.Running, roster.Ready, roster.Starting:
			return "running"
		default:
			return s
		}
	}, nil
}

// tokensOf is a token count as the tables show it: 950, 12.3k, 4.5M.
func tokensOf(t mailbox.Tokens) string {
	n := t.Total()
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1000000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1e6)
}

// costOf is a cost in US dollars as the tables show it, "-" when unknown.
func costOf(c *float64) string {
	if c == nil {
		return "-"
	}
	return fmt.Sprintf("$%.4f", *c)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
