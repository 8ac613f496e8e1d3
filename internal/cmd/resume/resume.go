// Package resume is the resume command: carry each answer back to its agent
// in a fresh spawn.
//
//	resume <team> [--watch] [--interval D] [--deciders LOGIN,…|@FILE] [--slack-deciders ID,…|@FILE] [--json]
//	resume pause <team>
//	resume unpause <team>
//
// One pass (for cron), or a pass every --interval with --watch. A pass first
// resolves what a crashed pass left, then re-spawns agents whose asks were
// answered with `ask answer`, then reads the replies to each awaiting ask on
// GitHub (conditionally: an unchanged issue costs no rate limit), takes the
// first qualifying answer, records it with a compare-and-set and re-spawns
// the agent with its task, its question and the fenced answer. It prints one
// line per resumed agent:
//
//	resumed ask=ID agent=NAME status=ready after=0.4s run=RUN decision=answered by=LOGIN
//
// A pass also wakes the team's wake agents (spawn --wake, type.conf
// wake=mail) that have new mail and whose last run ended normally, here
// (escalate's wake.go), one line each:
//
//	woke agent=NAME status=ready after=0.4s run=RUN mail=ID
//
// With --watch, new mail to the team starts a pass at once (the same push
// as inbox --wait), not an interval later.
//
// A pass also re-spawns, with its task, each agent whose usage-limit park
// has ended (roster.Respawnable), one line each:
//
//	unparked agent=NAME status=ready after=0.4s run=RUN parked_run=RUN
//
// Internal: the commands' own code; no user should import it.
package resume

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/pkg/agenttype"
	"github.com/teamkit/teamkit/pkg/escalate"
	"github.com/teamkit/teamkit/pkg/launch"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/roster"
	"github.com/teamkit/teamkit/pkg/spawn"
	"github.com/teamkit/teamkit/pkg/wait"
)

// App is the resume command.
var App = New(Hooks{})

// Hooks are behaviour that only tests install: the shipped binary has none.
type Hooks struct {
	// Crash is called at each crash point of a pass (escalate.Crash*); the
	// end-to-end tests make it kill the process there, to prove the next
	// pass recovers.
	Crash func(point string)
}

// New is the resume command with hooks.
func New(h Hooks) command.App {
	return command.App{Build: func(env *command.Env) *cli.App { return build(env, h) }}
}

// DefaultInterval is the --watch interval.
const DefaultInterval = 30 * time.Second

func build(env *command.Env, h Hooks) *cli.App {
	return &cli.App{
		Name:      "resume",
		Usage:     "carry answers back: re-spawn each agent whose ask was answered, and each wake agent with new mail",
		ArgsUsage: "<team>",
		UsageText: "resume <team> [--watch] [--interval D] [--parallel N] [--deciders LOGIN,…] [--slack-deciders ID,…] [--json]\n" +
			"resume pause|unpause <team>",
		Description: "Deciders (who may approve): --deciders or $TEAMKIT_DECIDERS, comma-separated GitHub logins or @FILE\n" +
			"(one login per line). GitHub: API base $GITHUB_API_URL, token $GH_TOKEN, $GITHUB_TOKEN or the gh login.\n" +
			"Slack: each pass reads the asks in Slack with $TEAMKIT_SLACK_BOT_TOKEN, as they stand; with\n" +
			"$TEAMKIT_SLACK_APP_TOKEN, --watch also hears Slack's events, which make it read at once. A thread reply\n" +
			"from $TEAMKIT_SLACK_ANSWERERS or the Slack deciders answers a question, only a ✅/❌ reaction from\n" +
			"--slack-deciders or $TEAMKIT_SLACK_DECIDERS (Slack user IDs, a,b or @FILE) decides an approval.\n" +
			"Wake on mail: a pass also re-spawns each agent spawned with --wake (or of a type with wake=mail) that has\n" +
			"mail newer than its last run, once that run ended normally on this host; --watch starts a pass as the mail lands.\n" +
			"Exit status: 0 pass done (also when paused or when another resume of the team is running),\n" +
			"1 failure (each reported on one line; every ask concerned stays awaiting), 64 usage error.\n\n" +
			"Examples:\n" +
			"   resume myteam                                   # one pass, for cron\n" +
			"   resume myteam --watch --interval 1m --deciders alice,bob\n" +
			"   TEAMKIT_SLACK_APP_TOKEN=xapp-… resume myteam --watch --slack-deciders U0123ABCD   # also hear Slack",
		Flags: command.Common(
			&cli.BoolFlag{Name: "watch", Usage: "run a pass every --interval until interrupted"},
			command.DurationFlagDefault("interval", "time `D` between --watch passes (60 = 60s, 1m)", DefaultInterval),
			&cli.IntFlag{Name: "parallel", Value: escalate.DefaultParallel, Usage: "re-spawn up to `N` agents at once (each waits for its own handshake)"},
			&cli.StringFlag{Name: "deciders", Usage: "`LOGINS` (comma-separated) or @FILE who may approve (default $TEAMKIT_DECIDERS)"},
			&cli.StringFlag{Name: "slack-deciders", Usage: "Slack user `IDS` (comma-separated) or @FILE who may approve in Slack (default $TEAMKIT_SLACK_DECIDERS)"},
		),
		Action: func(c *cli.Context) error { return run(c, env, h) },
		Commands: []*cli.Command{
			{
				Name:        "pause",
				Usage:       "stop resuming the team's agents until unpause",
				ArgsUsage:   "<team>",
				UsageText:   "resume pause <team>",
				Description: "Example:\n   resume pause myteam      # the kill-switch; --watch sees it before every pass",
				Flags:       command.Common(),
				Action:      func(c *cli.Context) error { return setPaused(c, env, true) },
			},
			{
				Name:        "unpause",
				Usage:       "resume the team's agents again",
				ArgsUsage:   "<team>",
				UsageText:   "resume unpause <team>",
				Description: "Example:\n   resume unpause myteam",
				Flags:       command.Common(),
				Action:      func(c *cli.Context) error { return setPaused(c, env, false) },
			},
		},
	}
}

// maxParallel bounds --parallel: each re-spawn holds a mailbox connection,
// a change watcher and an agent booting on this host.
const maxParallel = 64

// intervalHint is the hint of a refused --interval: what it is for, with a
// value that works.
var intervalHint = fmt.Sprintf("--interval is the time between --watch passes: say --interval 1m (the default is %s)", DefaultInterval)

// minInterval is the shortest --interval accepted.
const minInterval = 10 * time.Millisecond

// Options is one `resume <team>`, parsed and checked.
type Options struct {
	Team     string
	Watch    bool
	Interval time.Duration
	Parallel int
	JSON     bool
	// Config is the escalation configuration (the deciders lists with the
	// flags applied) and the factory of the channels' clients.
	Config *escalate.Config
	// DBPath and Heartbeat are recorded with every re-spawned run.
	DBPath    string
	Heartbeat time.Duration
	// MaxRunning is this host's cap (TEAMKIT_MAX_AGENTS), 0 for none.
	MaxRunning int
	// RunsDir holds the mailbox's run files on this host, where a run's
	// end may wait out an outage (launch.RecordSpooled).
	RunsDir string
	Hooks   Hooks
}

func run(c *cli.Context, env *command.Env, h Hooks) error {
	o, err := parseResume(c, env, h)
	if err != nil {
		return err
	}
	return command.WithMailbox(c, env, o.run)
}

func parseResume(c *cli.Context, env *command.Env, h Hooks) (*Options, error) {
	args := c.Args().Slice()
	if len(args) > 1 {
		return nil, command.WithHint(command.Usagef("%s", command.UsageLine("resume", "<team>", c.Command.Flags)), "run 'resume --help'")
	}
	team, _, _, err := command.Identity(env, args, 1)
	if err != nil {
		return nil, err
	}
	o := &Options{Team: team, Watch: c.Bool("watch"), Interval: command.Duration(c, "interval"), Parallel: c.Int("parallel"),
		JSON: c.Bool("json"), Config: escalate.FromEnv(env.Getenv), Hooks: h}
	switch {
	case o.Interval <= 0:
		return nil, command.WithHint(command.Usagef("--interval must be positive"), intervalHint)
	case o.Interval < minInterval:
		// 1ns would spin on the mailbox (and GitHub) in a busy loop.
		return nil, command.WithHint(command.Usagef("--interval %s is too short: want %s or more (say 30s, 1m)", o.Interval, minInterval), intervalHint)
	}
	if o.Parallel < 1 || o.Parallel > maxParallel {
		return nil, command.WithHint(command.Usagef("--parallel %d: want 1 to %d", o.Parallel, maxParallel),
			fmt.Sprintf("--parallel is how many agents a pass re-spawns at once (default %d): resume %s --parallel %d", escalate.DefaultParallel, o.Team, escalate.DefaultParallel))
	}
	if spec := c.String("deciders"); spec != "" {
		if !strings.HasPrefix(spec, "@") {
			if _, err := escalate.ParseDeciders(spec, nil); err != nil {
				return nil, command.UsageOf(fmt.Errorf("--deciders: %w", err), strings.Split(spec, ",")...)
			}
		}
		o.Config.Deciders = spec
	}
	if spec := c.String("slack-deciders"); spec != "" {
		if !strings.HasPrefix(spec, "@") {
			if _, err := escalate.ParseSlackUsers("Slack deciders", spec, nil); err != nil {
				return nil, command.UsageOf(fmt.Errorf("--slack-deciders: %w", err), strings.Split(spec, ",")...)
			}
		}
		o.Config.SlackDeciders = spec
	}
	if o.MaxRunning, err = command.MaxAgents(env, 0, false); err != nil {
		return nil, err
	}
	if o.Heartbeat, err = command.Heartbeat(env); err != nil {
		return nil, err
	}
	o.DBPath, _ = command.DBPath(c, env)
	o.RunsDir = command.RunsDir(c, env)
	return o, nil
}

// run is one pass, or with Watch a pass every Interval until ctx ends.
func (o *Options) run(ctx context.Context, env *command.Env, db *mailbox.DB) error {
	command.NoteUnknownTeam(ctx, env, "resume", db, o.Team)
	// A run's end spooled through an outage is recorded before a pass
	// reads the roster: its park (or its exit) then counts in the pass.
	launch.RecordSpooled(ctx, db, o.RunsDir, o.Team)
	base := spawn.Request{
		MaxRunning: o.MaxRunning, // a re-spawn waits for a slot like any spawn
		DBPath:     o.DBPath, StateDir: filepath.Join(command.StateHome(env), "teamkit"), Environ: env.Environ(),
		Host: roster.HostName(env.Getenv), Heartbeat: o.Heartbeat,
		// A foreground type runs on resume's terminal; its output must
		// not mix with resume's result lines.
		Stdin: env.Stdin, Stdout: env.Stderr, Stderr: env.Stderr,
	}
	r := &escalate.Resumer{
		DB:         db,
		Team:       o.Team,
		Channels:   o.Config.Channels(),
		Spawn:      spawner(env, db, base),
		NewRun:     func() string { return spawn.NewRun(time.Now()) },
		Parallel:   o.Parallel,
		Report:     reporter(o.JSON, env.Stdout),
		ReportWake: wakeReporter(o.JSON, env.Stdout),
		Host:       base.Host,
		Stderr:     env.Stderr,
		Prefix:     "resume",
		Crash:      o.Hooks.Crash,
	}
	if o.Watch {
		ctx, abort := context.WithCancel(ctx)
		defer abort()
		doorbell := make(chan struct{}, 1)
		r.Wake = doorbell
		ring := func() {
			select {
			case doorbell <- struct{}{}:
			default:
			}
		}
		stopMail := watchMail(ctx, db, o.Team, ring)
		defer stopMail()
		stopSlack := listenSlack(ctx, abort, env, db, r, o.Config, ring)
		// A SQLite file removed or replaced meanwhile (a reset) gets no
		// more mail or answers: watching it would do nothing for ever.
		var gone error
		replaced := db.Replaced()
		r.Sleep = func(ctx context.Context, d time.Duration) error {
			stop := command.Progress(env, fmt.Sprintf("resume: watching team %s; next pass in %s, waited", o.Team, d))
			defer stop()
			err := wait.Sleep(ctx, d)
			if gone = replaced(); gone != nil {
				abort()
				return gone
			}
			launch.RecordSpooled(ctx, db, o.RunsDir, o.Team)
			return err
		}
		err := r.Watch(ctx, o.Interval)
		if serr := stopSlack(); serr != nil {
			return command.WithHint(serr, appTokenHint(serr))
		}
		if gone != nil {
			return command.WithHint(gone, "start resume again: it opens the mailbox at the path anew")
		}
		return err
	}
	err := r.Once(ctx)
	var failed *escalate.FailedError
	switch {
	case errors.Is(err, escalate.ErrPaused):
		fmt.Fprintf(env.Stderr, "resume: team %s is paused; nothing done (run 'resume unpause %s' to carry on)\n", o.Team, o.Team)
		return nil
	case errors.Is(err, escalate.ErrLockHeld):
		fmt.Fprintf(env.Stderr, "resume: another resume of team %s is running; this pass does nothing\n", o.Team)
		return nil
	case errors.As(err, &failed):
		return &command.Error{Code: command.ExitFailure, Err: err, Quiet: true}
	}
	return err
}

// spawner re-spawns through spawn.Spawn, never replacing a live agent.
// base is what every re-spawn of the pass shares: where the mailbox and run
// files are, and this host, recorded with the run exactly as spawn records
// it, so that liveness is judged by the run's identity here and by its
// heartbeat elsewhere, and the old run is found and never doubled.
func spawner(env *command.Env, db *mailbox.DB, base spawn.Request) escalate.Spawner {
	return func(ctx context.Context, req escalate.SpawnRequest) (escalate.SpawnResult, error) {
		self, err := spawn.Executable()
		if err != nil {
			return escalate.SpawnResult{}, err
		}
		r := base
		r.Type, r.Team, r.Name, r.Task, r.Issue, r.Workdir = req.Type, req.Team, req.Name, req.Task, req.Issue, req.Workdir
		r.ResumeOf, r.Run, r.Ask, r.IfRun, r.Self = req.ResumeOf, req.Run, req.AskID, req.IfRun, self
		r.Wake = r.Wake || req.Wake
		// A re-spawn keeps the budget recorded with the agent's last launch.
		ag, err := db.Agent(ctx, req.Team, req.Name)
		if err != nil && !errors.Is(err, mailbox.ErrNotFound) {
			return escalate.SpawnResult{}, err
		}
		r.Budget = ag.Budget
		if c := req.Continue; c != nil {
			r.Continue = &spawn.Continuation{Session: c.Session, Why: c.Why, News: c.News}
		}
		res, err := spawn.Spawn(ctx, db, agenttype.NewFinder(env.Getenv), r)
		switch {
		case errors.Is(err, spawn.ErrAlive):
			err = fmt.Errorf("%w: %w", escalate.ErrAgentBusy, err)
		case errors.Is(err, spawn.ErrSuperseded):
			err = fmt.Errorf("%w: %w", escalate.ErrSuperseded, err)
		}
		if err != nil {
			return escalate.SpawnResult{}, err
		}
		return escalate.SpawnResult{Status: res.Status, Run: res.Agent.Run, After: res.After,
			ExitCode: res.Agent.ExitCode, Log: res.Agent.Log}, nil
	}
}

// reporter prints one line per resumed agent (one JSON object with asJSON).
func reporter(asJSON bool, w io.Writer) func(escalate.Resumed) error {
	return func(r escalate.Resumed) error {
		if asJSON {
			return command.JSON(w, r)
		}
		word, kv := "resumed ", []string{"ask", strconv.FormatInt(r.AskID, 10), "agent", r.Agent, "status", r.Status,
			"after", fmt.Sprintf("%.1fs", r.AfterSeconds), "run", r.Run, "decision", r.Decision, "by", r.DecidedBy}
		if r.Kind == escalate.KindPark {
			word, kv = "unparked ", []string{"agent", r.Agent, "status", r.Status, "after", fmt.Sprintf("%.1fs", r.AfterSeconds),
				"run", r.Run, "parked_run", r.Parked}
		}
		if r.Status == spawn.StatusExited {
			code := "unknown"
			if r.ExitCode != nil {
				code = strconv.Itoa(*r.ExitCode)
			}
			kv = append(kv, "code", code, "log", r.Log)
		}
		var b strings.Builder
		b.WriteString(word)
		if err := command.KV(&b, kv...); err != nil {
			return err
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
}

// wakeReporter prints one line per agent woken by mail (one JSON object
// with asJSON).
func wakeReporter(asJSON bool, w io.Writer) func(escalate.Woke) error {
	return func(k escalate.Woke) error {
		if asJSON {
			return command.JSON(w, k)
		}
		kv := []string{"agent", k.Agent, "status", k.Status, "after", fmt.Sprintf("%.1fs", k.AfterSeconds), "run", k.Run,
			"mail", strconv.FormatInt(k.Mail, 10)}
		var b strings.Builder
		b.WriteString("woke ")
		if err := command.KV(&b, kv...); err != nil {
			return err
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
}

// PauseOptions is one `resume pause` or `resume unpause`.
type PauseOptions struct {
	Team   string
	Paused bool
	JSON   bool
}

func setPaused(c *cli.Context, env *command.Env, paused bool) error {
	parse := func(c *cli.Context, env *command.Env) (*PauseOptions, error) {
		args := c.Args().Slice()
		if len(args) > 1 {
			return nil, command.Usagef("usage: resume %s <team>", c.Command.Name)
		}
		team, _, _, err := command.Identity(env, args, 1)
		if err != nil {
			return nil, err
		}
		return &PauseOptions{Team: team, Paused: paused, JSON: c.Bool("json")}, nil
	}
	o, err := parse(c, env)
	if err != nil {
		return err
	}
	return command.WithMailbox(c, env, o.run)
}

// run throws or clears the team's kill-switch.
func (o *PauseOptions) run(ctx context.Context, env *command.Env, db *mailbox.DB) error {
	var err error
	if o.Paused {
		err = escalate.Pause(ctx, db, o.Team, env.Now())
	} else {
		err = escalate.Unpause(ctx, db, o.Team)
	}
	if err != nil {
		return err
	}
	if o.JSON {
		return command.JSON(env.Stdout, map[string]any{"team": o.Team, "paused": o.Paused})
	}
	state := "no"
	if o.Paused {
		state = "yes"
	}
	return command.KV(env.Stdout, "team", o.Team, "paused", state)
}
