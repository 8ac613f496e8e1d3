// Package ask is the ask command: escalate a question to a human, durably.
//
//	ask [QUESTION|-] [--team T] [--name N] [--issue OWNER/REPO#N] [--approval] [--json]
//	ask list <team> [--state awaiting|answered|all] [--json]
//	ask answer <id> [TEXT|-] [--approve | --reject] [--json]
//
// Inside an agent started by spawn, ask takes the agent's identity (team,
// name, run, issue) from the environment. The question is recorded as an
// awaiting ask first; with an issue it is then posted there as a comment
// with a hidden marker, once per run however often ask is re-run. Without an
// issue it waits on the local channel for `ask answer`. The agent then exits:
// `resume` starts it again with the answer.
//
// Internal: the commands' own code; no user should import it.
package ask

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/pkg/escalate"
	"github.com/teamkit/teamkit/pkg/github"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/names"
	"github.com/teamkit/teamkit/pkg/text"
)

// App is the ask command.
var App = command.App{Build: build}

func build(env *command.Env) *cli.App {
	return &cli.App{
		Name:      "ask",
		Usage:     "escalate a question (or a request for approval) to a human, durably",
		ArgsUsage: "[QUESTION|-]",
		UsageText: "ask [QUESTION|-] [--team T] [--name N] [--issue OWNER/REPO#N] [--approval]\n" +
			"ask list <team> [--state awaiting|answered|all] [--json]\n" +
			"ask answer <id> [TEXT|-] [--approve | --reject]",
		Description: "Inside an agent started by spawn, the team, name, run and issue come from $TEAMKIT_TEAM, $TEAMKIT_AGENT,\n" +
			"$TEAMKIT_RUN and $TEAMKIT_ISSUE. The question is read from stdin when absent or '-'.\n" +
			"GitHub: API base $GITHUB_API_URL, token $GH_TOKEN, $GITHUB_TOKEN or the gh login.\n" +
			"Slack (optional): $TEAMKIT_SLACK_BOT_TOKEN and $TEAMKIT_SLACK_CHANNEL post the question (its thread and\n" +
			"reactions answer it, through resume --watch); $TEAMKIT_SLACK_WEBHOOK mirrors it one way. A Slack failure is a warning.\n" +
			"Exit status: 0 recorded (and posted), 1 failure (the ask stays recorded), 64 usage error.\n\n" +
			"Examples:\n" +
			"   ask \"Should the retry limit be 3 or 5?\"          # inside an agent; then exit\n" +
			"   ask --approval \"May I drop the legacy_users table?\"\n" +
			"   ask list myteam",
		Flags: command.Common(
			&cli.StringFlag{Name: "team", Usage: "team `T` (default $TEAMKIT_TEAM)"},
			&cli.StringFlag{Name: "name", Usage: "the asking agent's `NAME` (default $TEAMKIT_AGENT)"},
			&cli.StringFlag{Name: "issue", Usage: "post on GitHub issue `OWNER/REPO#N` (default $TEAMKIT_ISSUE; none: the local channel)"},
			&cli.BoolFlag{Name: "approval", Usage: "ask for approval: only /approve or /reject from a decider counts"},
		),
		Action: func(c *cli.Context) error { return runAsk(c, env) },
		Commands: []*cli.Command{
			{
				Name:        "list",
				Usage:       "list a team's asks",
				ArgsUsage:   "<team>",
				UsageText:   "ask list <team> [--state awaiting|answered|all] [--json]",
				Description: "Example:\n   ask list myteam --state all",
				Flags: command.Common(
					&cli.StringFlag{Name: "state", Value: "awaiting", Usage: "`STATE`: awaiting, answered or all"},
				),
				Action: func(c *cli.Context) error { return runList(c, env) },
			},
			{
				Name:      "answer",
				Usage:     "answer an ask on the local channel (the next resume pass carries it back)",
				ArgsUsage: "<id> [TEXT|-]",
				UsageText: "ask answer <id> [TEXT|-] [--approve | --reject] [--deciders LOGINS]",
				Description: "Examples:\n   ask answer 4 \"5, and log each retry\"\n   TEAMKIT_DECIDERS=\"${USER:-local-user}\" ask answer 5 --approve \"checked the read stats\"\n" +
					"The decider is $USER, or local-user when USER is unset.",
				Flags: command.Common(
					&cli.BoolFlag{Name: "approve", Usage: "approve an approval ask (TEXT is the optional reason)"},
					&cli.BoolFlag{Name: "reject", Usage: "reject an approval ask (TEXT is the optional reason)"},
					&cli.StringFlag{Name: "deciders", Usage: "`LOGINS` allowed to decide approvals (default $TEAMKIT_DECIDERS; a,b or @FILE); your $USER must be one"},
				),
				Action: func(c *cli.Context) error { return runAnswer(c, env) },
			},
		},
	}
}

// Options is one `ask QUESTION`, parsed and checked: who asks, where, and
// what. run acts on it with the clients it builds only when it needs them.
type Options struct {
	Team, Name, Run string
	Issue           string // OWNER/REPO#N, or "" for the local channel
	Kind            string // mailbox.KindQuestion or mailbox.KindApproval
	Question        string
	JSON            bool
	// Channels post the question (escalate.Config.Channels); each makes
	// its client only if the ask goes there.
	Channels []escalate.Channel
	// Webhook is the Slack incoming-webhook mirror ("" for none).
	Webhook string
}

func runAsk(c *cli.Context, env *command.Env) error {
	o, err := parseAsk(c, env)
	if err != nil {
		return err
	}
	return command.WithMailbox(c, env, o.run)
}

// parseAsk reads the command line, the environment spawn set and, when no
// QUESTION argument is given, the question from stdin.
func parseAsk(c *cli.Context, env *command.Env) (*Options, error) {
	args := c.Args().Slice()
	if len(args) > 1 {
		// "ask lst t" is a mistyped verb, not a question in two words.
		if command.NearVerb(c.App, args[0]) != "" {
			return nil, command.UnknownVerb(c.App, args[0])
		}
		return nil, command.Usagef("give the question as one argument (quote it) or on stdin; got %d arguments", len(args))
	}
	envTeam, envName := env.Getenv("TEAMKIT_TEAM"), env.Getenv("TEAMKIT_AGENT")
	cfg := escalate.FromEnv(env.Getenv)
	o := &Options{Team: c.String("team"), Name: c.String("name"), JSON: c.Bool("json"),
		Kind: mailbox.KindQuestion, Webhook: cfg.SlackWebhook, Channels: cfg.Channels()}
	if o.Team == "" {
		o.Team = envTeam
	}
	if o.Name == "" {
		o.Name = envName
	}
	if o.Team == "" {
		return nil, command.Usagef("missing --team (or set TEAMKIT_TEAM; spawn sets it for its agents)")
	}
	if o.Name == "" {
		return nil, command.Usagef("missing --name (or set TEAMKIT_AGENT; spawn sets it for its agents)")
	}
	for _, n := range [][2]string{{"team", o.Team}, {"agent", o.Name}} {
		if err := command.CheckName(n[0], n[1]); err != nil {
			return nil, err
		}
	}
	// Inside a spawned run (TEAMKIT_RUN set), an agent asks only as itself:
	// an ask for another agent would put this agent's words into that
	// agent's next briefing.
	o.Run = env.Getenv("TEAMKIT_RUN")
	if o.Run != "" {
		if o.Team != envTeam || o.Name != envName {
			return nil, command.Usagef("inside an agent's run, ask only as that agent (%s/%s)", envTeam, envName)
		}
		if err := command.CheckName("run", o.Run); err != nil {
			return nil, err
		}
	}
	o.Issue = c.String("issue")
	if o.Issue == "" && !c.IsSet("issue") {
		o.Issue = env.Getenv("TEAMKIT_ISSUE")
	}
	if o.Issue != "" {
		if _, err := github.ParseIssueRef(o.Issue); err != nil {
			return nil, command.UsageOf(err, o.Issue)
		}
	}
	if len(args) == 1 && args[0] != "-" {
		o.Question = args[0]
	} else {
		b, err := io.ReadAll(io.LimitReader(env.Stdin, mailbox.MaxBody+1))
		if err != nil {
			return nil, fmt.Errorf("read the question from stdin: %w", err)
		}
		o.Question = string(b)
	}
	if err := escalate.CheckQuestion(o.Question); err != nil {
		hint := ""
		if errors.Is(err, escalate.ErrEmptyQuestion) && len(args) == 0 {
			hint = "the question is read from stdin when no QUESTION argument is given"
		}
		return nil, command.WithHint(&command.Error{Code: command.ExitUsage, Err: err}, hint)
	}
	if c.Bool("approval") {
		o.Kind = mailbox.KindApproval
	}
	return o, nil
}

// run records the ask, posts it where it goes (never twice), mirrors it,
// and says what happens next.
func (o *Options) run(ctx context.Context, env *command.Env, db *mailbox.DB) error {
	a, created, err := escalate.Record(ctx, db, mailbox.Ask{Team: o.Team, Agent: o.Name, Run: o.Run, Issue: o.Issue, Kind: o.Kind, Question: o.Question})
	if errors.Is(err, escalate.ErrAgentNeverLaunch) {
		return command.WithHint(err, "run ask from inside an agent that spawn started, or name such an agent with --team and --name")
	}
	if err != nil {
		return err
	}
	if !created && a.Question != o.Question {
		return command.WithHint(fmt.Errorf("run %s already asked (ask %d); this question was not recorded", o.Run, a.ID),
			fmt.Sprintf("one ask per run: exit now, and ask %d's answer comes back in a fresh spawn", a.ID))
	}

	var postErr error
	for _, ch := range o.Channels {
		var err error
		a, err = ch.Post(ctx, db, a, created)
		var optional *escalate.OptionalError
		switch {
		case errors.As(err, &optional):
			fmt.Fprintf(env.Stderr, "ask: warning: %s (the ask itself is fine)\n", text.OneLine(err.Error()))
		case err != nil && postErr == nil:
			postErr = err
		}
	}
	if o.Webhook != "" && created {
		if err := escalate.MirrorSlack(ctx, &http.Client{}, o.Webhook, a); err != nil {
			fmt.Fprintf(env.Stderr, "ask: warning: %s (the ask itself is fine)\n", text.OneLine(err.Error()))
		}
	}
	if err := printAsk(o.JSON, env, o.Channels, a); err != nil {
		return err
	}
	if postErr != nil {
		hint := fmt.Sprintf("ask %d is recorded and awaiting; run ask again to retry (it never posts twice), let resume post it, or answer it with 'ask answer %d'", a.ID, a.ID)
		var ce *escalate.ConfigError
		if errors.As(postErr, &ce) && ce.Hint != "" {
			hint = ce.Hint + "; " + hint
		}
		return command.WithHint(postErr, hint)
	}
	if a.State == mailbox.AskAwaiting {
		if _, _, where := escalate.Describe(o.Channels, a); len(where) > 0 {
			fmt.Fprintf(env.Stderr, "ask: posted to %s; a person answers there or with 'ask answer %d'. Exit now: the answer comes back in a fresh spawn.\n", strings.Join(where, " and "), a.ID)
		} else {
			fmt.Fprintf(env.Stderr, "ask: recorded on the local channel; a person answers with 'ask answer %d'. Exit now: the answer comes back in a fresh spawn.\n", a.ID)
		}
	}
	return nil
}

func printAsk(asJSON bool, env *command.Env, chs []escalate.Channel, a mailbox.Ask) error {
	if asJSON {
		return command.JSON(env.Stdout, seenBy(env, a))
	}
	kv := []string{"ask", strconv.FormatInt(a.ID, 10), "state", a.State, "kind", a.Kind}
	where, _, _ := escalate.Describe(chs, a)
	kv = append(kv, where...)
	if a.State == mailbox.AskAnswered {
		kv = append(kv, "decision", a.Decision, "by", a.DecidedBy)
	}
	return command.KV(env.Stdout, kv...)
}

// seenBy is a as this command's caller may see it: inside an agent's run
// (TEAMKIT_RUN set, as for ask answer's refusal) a person's answer only
// fenced (escalate.ForAgent), the one way such text reaches an agent.
func seenBy(env *command.Env, a mailbox.Ask) mailbox.Ask {
	if env.Getenv("TEAMKIT_RUN") != "" {
		return escalate.ForAgent(a)
	}
	return a
}

// ListOptions is one `ask list`.
type ListOptions struct {
	Team  string
	State string // mailbox.AskAwaiting, AskAnswered, or "" for all
	JSON  bool
	// Channels describe where each ask is.
	Channels []escalate.Channel
}

func runList(c *cli.Context, env *command.Env) error {
	o, err := parseList(c, env)
	if err != nil {
		return err
	}
	return command.WithMailbox(c, env, o.run)
}

func parseList(c *cli.Context, env *command.Env) (*ListOptions, error) {
	args := c.Args().Slice()
	if len(args) > 1 {
		return nil, command.Usagef("usage: ask list <team> [--state awaiting|answered|all]")
	}
	team, _, _, err := command.Identity(env, args, 1)
	if err != nil {
		return nil, err
	}
	o := &ListOptions{Team: team, State: c.String("state"), JSON: c.Bool("json"), Channels: escalate.FromEnv(env.Getenv).Channels()}
	switch o.State {
	case mailbox.AskAwaiting, mailbox.AskAnswered:
	case "all":
		o.State = ""
	default:
		return nil, command.Usagef("--state %q: want awaiting, answered or all", o.State)
	}
	return o, nil
}

func (o *ListOptions) run(ctx context.Context, env *command.Env, db *mailbox.DB) error {
	asks, err := db.Asks(ctx, o.Team, o.State)
	if err != nil {
		return err
	}
	if o.JSON {
		for i := range asks {
			asks[i] = seenBy(env, asks[i])
		}
		return command.JSONLines(env.Stdout, asks)
	}
	tw := env.Table(env.Stdout, "ID", "AGENT", "KIND", "STATE", "CHANNEL", "CREATED", "DECISION", "QUESTION")
	for _, a := range asks {
		_, channel, _ := escalate.Describe(o.Channels, a)
		decision := "-"
		if a.State == mailbox.AskAnswered {
			decision = a.Decision + " by " + a.DecidedBy
			if a.ResumedRun != "" {
				decision += ", resumed"
			}
		}
		tw.Row(strconv.FormatInt(a.ID, 10), a.Agent, a.Kind, a.State, channel,
			command.FormatTime(a.CreatedAt), decision, text.FirstLine(a.Question, 60))
	}
	return tw.Flush()
}

// AnswerOptions is one `ask answer`: the answer given on the local channel.
type AnswerOptions struct {
	escalate.LocalAnswer
	JSON bool
	// Channels describe the answered ask.
	Channels []escalate.Channel
}

func runAnswer(c *cli.Context, env *command.Env) error {
	o, err := parseAnswer(c, env)
	if err != nil {
		return err
	}
	return command.WithMailbox(c, env, o.run)
}

func parseAnswer(c *cli.Context, env *command.Env) (*AnswerOptions, error) {
	args := c.Args().Slice()
	if len(args) < 1 || len(args) > 2 {
		return nil, command.Usagef("usage: ask answer <id> [TEXT|-] [--approve | --reject]")
	}
	id, err := strconv.ParseInt(args[0], 10, 64)
	if err != nil || id <= 0 {
		return nil, command.Usagef("ask id %q: want a positive number (see 'ask list')", args[0])
	}
	if env.Getenv("TEAMKIT_RUN") != "" {
		return nil, command.WithHint(command.Usagef("ask answer is for a person, and this looks like an agent (TEAMKIT_RUN is set)"),
			"an agent that is blocked asks and exits; a person answers")
	}
	approve, reject := c.Bool("approve"), c.Bool("reject")
	if approve && reject {
		return nil, command.Usagef("give --approve or --reject, not both")
	}
	decision := mailbox.DecisionAnswered
	switch {
	case approve:
		decision = mailbox.DecisionApproved
	case reject:
		decision = mailbox.DecisionRejected
	}
	answer := ""
	switch {
	case len(args) == 2 && args[1] != "-":
		answer = args[1]
	case len(args) == 2 || decision == mailbox.DecisionAnswered:
		b, err := io.ReadAll(io.LimitReader(env.Stdin, mailbox.MaxBody+1))
		if err != nil {
			return nil, fmt.Errorf("read the answer from stdin: %w", err)
		}
		answer = string(b)
	}
	by := env.Getenv("USER")
	if names.Check("agent", by) != nil {
		by = "local-user"
	}
	cfg := escalate.FromEnv(env.Getenv)
	o := &AnswerOptions{LocalAnswer: escalate.LocalAnswer{ID: id, Text: answer, Decision: decision, By: by}, JSON: c.Bool("json"), Channels: cfg.Channels()}
	if spec := c.String("deciders"); spec != "" {
		cfg.Deciders = spec
	}
	o.Deciders, err = escalate.ParseLocalDeciders(cfg.Deciders, escalate.ReadListFile)
	if err != nil && o.Decision != mailbox.DecisionAnswered {
		return nil, err // an unreadable list decides nothing
	}
	return o, nil
}

func (o *AnswerOptions) run(ctx context.Context, env *command.Env, db *mailbox.DB) error {
	a, err := escalate.AnswerLocal(ctx, db, o.LocalAnswer)
	switch {
	case errors.Is(err, escalate.ErrNeedsDecision), errors.Is(err, escalate.ErrNotApproval),
		errors.Is(err, escalate.ErrEmptyAnswer), errors.Is(err, escalate.ErrBadAnswer):
		return &command.Error{Code: command.ExitUsage, Err: err}
	case errors.Is(err, escalate.ErrNotDecider):
		return err
	case errors.Is(err, mailbox.ErrNotFound):
		return command.WithHint(err, "see 'ask list <team> --state all'")
	case err != nil:
		return err
	}
	if err := printAsk(o.JSON, env, o.Channels, a); err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "ask: recorded; the next 'resume %s' pass starts agent %s again with it\n", a.Team, a.Agent)
	return nil
}
