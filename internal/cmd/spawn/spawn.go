// Package spawn is the spawn command: start an agent of a type, brief it
// whole, and for handshake types wait until it is really ready.
//
//	spawn <type> <name> [--team T] [--task TEXT | --task-file F] [--issue OWNER/REPO#N]
//	                    [--timeout D] [--workdir DIR] [--replace] [--json]
//
// Prints "status=ready after=Ns …" (exit 0) once a handshake type's run has
// marked ready; "status=launched-unconfirmed …" (exit 0) at once for a type
// without a handshake; "status=exited code=N log=PATH" (exit 2) as soon as the
// agent exits before marking; "status=timeout" (exit 2) when the wait ends.
//
// Internal: the commands' own code; no user should import it.
package spawn

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/pkg/agenttype"
	"github.com/teamkit/teamkit/pkg/github"
	"github.com/teamkit/teamkit/pkg/launch"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/readlimit"
	"github.com/teamkit/teamkit/pkg/roster"
	"github.com/teamkit/teamkit/pkg/runstream"
	"github.com/teamkit/teamkit/pkg/spawn"
)

// App is the spawn command.
var App = New(Hooks{})

// Hooks are behaviour that only tests install: the shipped binary has none.
type Hooks struct {
	// Step is called at each step of a supervisor's start (StepBeforeOpen,
	// then launch.Step*); the fault tests inject a fault there.
	Step func(point string)
}

// StepBeforeOpen is the supervisor's first step: its spec read, its mailbox
// not yet opened.
const StepBeforeOpen = "supervisor-before-open"

// New is the spawn command with hooks.
func New(h Hooks) command.App {
	return command.App{Build: func(env *command.Env) *cli.App { return build(env, h) }, Types: typeNames}
}

// typeNames are the types on the types path that spawn can start, for
// completion; none when the path cannot be read. A type named for one of
// spawn's verbs is left out: the verb takes that first argument.
func typeNames(env *command.Env) []string {
	list, err := agenttype.NewFinder(env.Getenv).List()
	if err != nil {
		return nil
	}
	verbs := verbNames(build(env, Hooks{}).Commands)
	var out []string
	for _, l := range list {
		if !l.Shadowed && !slices.Contains(verbs, l.Name) {
			out = append(out, l.Name)
		}
	}
	return out
}

// verbNames are the names a first argument to spawn is taken for rather
// than a type: its verbs, and the completion and help every command has.
func verbNames(verbs []*cli.Command) []string {
	var out []string
	for _, v := range verbs {
		if !v.Hidden {
			out = append(out, v.Name)
		}
	}
	return append(out, "completion", "help")
}

func build(env *command.Env, h Hooks) *cli.App {
	verbs := []*cli.Command{
		listCommand(env),
		runsCommand(env),
		logCommand(env),
		stopCommand(env),
		{
			// The supervisor of one agent run; spawn starts it, never a user.
			Name:   "__run",
			Hidden: true,
			Action: func(c *cli.Context) error { return supervise(c, env, h) },
		},
		{
			// The guard of one run's supervisor; the supervisor starts it.
			Name:   "__guard",
			Hidden: true,
			Action: func(c *cli.Context) error { return guard(c, env) },
		},
	}
	reserved := verbNames(verbs)
	return &cli.App{
		Name:      "spawn",
		Usage:     "start an agent of a type, briefed whole, and wait until it is really ready",
		ArgsUsage: "<type> <name>",
		UsageText: "spawn <type> <name> [--team T] [--task TEXT | --task-file F] [--issue OWNER/REPO#N] [--timeout D] [--workdir DIR] [--replace] [--no-auth-check] [--max-running N [--no-wait]] [--worktree] [--budget-tokens N] [--budget-usd X] [--grace D] [--json]\n" +
			"spawn list <team> [--json] [--watch [--interval D]]\n" +
			"spawn log <team> <name> [--follow]\n" +
			"spawn stop <team> (<name> | --all) [--grace D] [--clean]",
		Description: "Types are looked up in $TEAMKIT_TYPES (colon-separated; semicolon-separated on Windows), $XDG_CONFIG_HOME/teamkit/types, then the built-in types.\n" +
			"--timeout takes seconds (60) or a duration (10m). A type named " + strings.Join(reserved[:len(reserved)-1], ", ") + " or " + reserved[len(reserved)-1] + " cannot be spawned.\n" +
			"A type without a handshake that exits within 2s is reported as exited; an exited or timed-out spawn prints\n" +
			"the agent's last output lines on stderr, and a timed-out agent is stopped (SIGTERM, SIGKILL after --grace).\n" +
			"Under a cap (--max-running, $TEAMKIT_MAX_AGENTS) a spawn beyond it waits in state queued, oldest first, within --timeout;\n" +
			"--no-wait returns status=queued (exit 0) and the queue starts the agent when a slot frees.\n" +
			"Exit status: 0 ready (or launched, for types without a handshake), 2 not ready in time or the agent exited first,\n" +
			"1 failure, 64 usage error.\n\n" +
			"Examples:\n" +
			"   spawn probe w1 --team myteam\n" +
			"   spawn claude w2 --team myteam --task-file task.md --issue octo/app#12 --timeout 600\n" +
			"   spawn list myteam",
		Flags: command.Common(
			&cli.StringFlag{Name: "team", Usage: "team `T` (default $TEAMKIT_TEAM)"},
			&cli.StringFlag{Name: "task", Usage: "the task `TEXT`, placed in the briefing byte for byte"},
			&cli.StringFlag{Name: "task-file", Usage: "read the task from `FILE` (- for stdin)"},
			&cli.StringFlag{Name: "issue", Usage: "the GitHub issue the agent works on, `OWNER/REPO#N`"},
			timeoutFlag(),
			&cli.StringFlag{Name: "workdir", Usage: "the agent's working `DIR` (default: the current directory)"},
			&cli.BoolFlag{Name: "replace", Usage: "stop a live agent of the same name first"},
			&cli.BoolFlag{Name: "no-auth-check", Usage: "launch even when none of the type's keys or login files is found"},
			&cli.IntFlag{Name: "max-running", Usage: "run at most `N` agents on this host; beyond, wait in the queue (default $TEAMKIT_MAX_AGENTS, else no cap)"},
			&cli.BoolFlag{Name: "no-wait", Usage: "under a cap, return status=queued at once when no slot is free"},
			&cli.BoolFlag{Name: "worktree", Usage: "run the agent in a git worktree of its own, on branch teamkit/<team>/<name>, made from the workdir's repository"},
			&cli.BoolFlag{Name: "wake", Usage: "wake on mail: once the run has ended normally, new mail to the agent re-spawns it (by resume <team>; also type.conf wake=mail)"},
			&cli.StringFlag{Name: "budget-tokens", Usage: "stop each run once it has used `N` tokens (input, output and cache) and ask a decider whether to go on (default type.conf budget_tokens, else $TEAMKIT_BUDGET_TOKENS)"},
			&cli.StringFlag{Name: "budget-usd", Usage: "stop each run once the CLI reports it cost `X` US dollars and ask a decider whether to go on (default type.conf budget_usd, else $TEAMKIT_BUDGET_USD)"},
			graceFlag(),
		),
		Action:   func(c *cli.Context) error { return run(c, env) },
		Commands: verbs,
	}
}

// timeoutFlag is --timeout: plain numbers are seconds, like ready_timeout.
func timeoutFlag() cli.Flag {
	f := command.DurationFlag("timeout", "wait at most `D` for the ready mark (60 = 60s, 10m); for a type without a handshake, watch this long for an early exit")
	f.DefaultText = "the larger of the type's ready_timeout and 300s; 2s without a handshake"
	return f
}

// Options is one `spawn <type> <name>`, parsed and checked; run acts on it.
type Options struct {
	// Request is the spawn, all but what comes from the open mailbox.
	Request spawn.Request
	JSON    bool
	// Self finds the spawn executable to start as the supervisor; called
	// only when a run is launched.
	Self func() (string, error)
}

func run(c *cli.Context, env *command.Env) error {
	o, err := parseSpawn(c, env)
	if err != nil {
		return err
	}
	return command.WithMailbox(c, env, o.run)
}

// parseSpawn reads the command line, the environment and, for --task-file,
// the task, and checks every name before anything is touched.
func parseSpawn(c *cli.Context, env *command.Env) (*Options, error) {
	args := c.Args().Slice()
	if len(args) > 0 {
		// "spawn lst myteam" is a mistyped verb, not a type called lst.
		if _, err := agenttype.NewFinder(env.Getenv).Find(args[0]); errors.Is(err, agenttype.ErrUnknownType) {
			if verb := command.NearVerb(c.App, args[0]); verb != "" {
				return nil, command.WithHint(command.Usagef("unknown type or command %q", args[0]), "did you mean 'spawn "+verb+"'?")
			}
			return nil, explain(err, env)
		}
	}
	if len(args) != 2 {
		return nil, command.Usagef("usage: spawn <type> <name> [--team T] [--task TEXT]")
	}
	team := c.String("team")
	if team == "" {
		team = env.Getenv("TEAMKIT_TEAM")
	}
	if team == "" {
		return nil, command.Usagef("missing --team (or set TEAMKIT_TEAM)")
	}
	for _, n := range [][2]string{{"type", args[0]}, {"team", team}, {"agent", args[1]}} {
		if err := command.CheckName(n[0], n[1]); err != nil {
			return nil, err
		}
	}
	task := c.String("task")
	if command.Duration(c, "timeout") < 0 {
		return nil, command.Usagef("--timeout must be positive")
	}
	if f := c.String("task-file"); f != "" {
		if task != "" {
			return nil, command.Usagef("give --task or --task-file, not both")
		}
		// At most the largest task checkTask accepts, a message body's
		// limit: /dev/zero or an endless pipe is refused, not read until
		// memory runs out. A pipe is a fine task file (`<(cmd)`).
		// A FIFO with no writer (or a stdin nobody writes) blocks in the
		// kernel, where no context reaches: SIGTERM still ends the spawn.
		var data []byte
		err := command.Interruptible(c.Context, func() error {
			var err error
			if f == "-" {
				data, err = readlimit.Read(env.Stdin, mailbox.MaxBody)
			} else {
				data, err = readlimit.File(f, mailbox.MaxBody)
			}
			return err
		})
		if cerr := c.Context.Err(); cerr != nil {
			return nil, cerr
		}
		var tooLarge *readlimit.TooLargeError
		if errors.As(err, &tooLarge) {
			return nil, &command.Error{Code: command.ExitUsage, Err: fmt.Errorf("--task-file %s: %w", f, tooLarge)}
		}
		if err != nil {
			return nil, command.WithHint(fmt.Errorf("read task file: %w", err), "--task-file names a file holding the task text")
		}
		task = string(data)
	}
	if err := checkTask(task); err != nil {
		return nil, err
	}
	issue := c.String("issue")
	if issue != "" {
		if _, err := github.ParseIssueRef(issue); err != nil {
			return nil, command.UsageOf(err, issue)
		}
	}
	heartbeat, err := command.Heartbeat(env)
	if err != nil {
		return nil, err
	}
	grace, err := graceOf(c)
	if err != nil {
		return nil, err
	}
	maxRunning, err := command.MaxAgents(env, c.Int("max-running"), c.IsSet("max-running"))
	if err != nil {
		return nil, err
	}
	if c.Bool("no-wait") && maxRunning == 0 {
		return nil, command.Usagef("--no-wait waits for nothing without a cap: give --max-running N or set TEAMKIT_MAX_AGENTS")
	}
	budget, err := budgetFlags(c)
	if err != nil {
		return nil, err
	}
	dbPath, _ := command.DBPath(c, env)
	o := &Options{
		Request: spawn.Request{
			Type: args[0], Team: team, Name: args[1], Task: task, Issue: issue,
			Workdir: c.String("workdir"), Timeout: command.Duration(c, "timeout"), Replace: c.Bool("replace"), NoAuthCheck: c.Bool("no-auth-check"),
			MaxRunning: maxRunning, NoWait: c.Bool("no-wait"), Worktree: c.Bool("worktree"), Wake: c.Bool("wake"),
			Budget: budget, DBPath: dbPath, StateDir: command.StateDir(env),
			Environ: env.Environ(),
			Host:    roster.HostName(env.Getenv), Heartbeat: heartbeat, Grace: grace,
			Stdin: env.Stdin, Stdout: env.Stdout, Stderr: env.Stderr,
		},
		JSON: c.Bool("json"),
		Self: spawn.Executable,
	}
	// The type, the workdir, the CLI and its key are refused here, before
	// the mailbox is opened: a spawn that cannot start creates nothing.
	if err := spawn.Check(c.Context, agenttype.NewFinder(env.Getenv), o.Request); err != nil {
		return nil, explain(err, env)
	}
	return o, nil
}

// run spawns the agent into db and reports how the spawn ended: exit 2
// when the agent exited or timed out before it was ready.
func (o *Options) run(ctx context.Context, env *command.Env, db *mailbox.DB) error {
	req := o.Request
	if known, err := db.TeamKnown(ctx, req.Team); err == nil && !known {
		// A new team is fine; a misspelt --team should not pass unseen.
		fmt.Fprintf(env.Stderr, "spawn: note: team %q is new: no agents and no messages in %s yet\n", req.Team, db.Path())
	}
	self, err := o.Self()
	if err != nil {
		return err
	}
	req.Self = self
	req.Waiting = func() func() {
		return command.Progress(env, fmt.Sprintf("spawn: waiting for %s/%s to mark ready", req.Team, req.Name))
	}
	req.Queued = func() func() {
		return command.Progress(env, fmt.Sprintf("spawn: %s/%s is queued for one of this host's %d slots", req.Team, req.Name, req.MaxRunning))
	}
	res, err := spawn.Spawn(ctx, db, agenttype.NewFinder(env.Getenv), req)
	if err != nil {
		return explain(err, env)
	}
	if err := report(o.JSON, env, res); err != nil {
		return err
	}
	for _, line := range res.Output {
		fmt.Fprintf(env.Stderr, "spawn: agent output: %s\n", line)
	}
	if hint := timeoutHint(res); hint != "" {
		fmt.Fprintf(env.Stderr, "spawn: hint: %s\n", hint)
	}
	if res.Status == spawn.StatusQueued && !req.NoWait {
		fmt.Fprintf(env.Stderr, "spawn: hint: %s/%s stays queued and starts when one of this host's %d slots frees; `spawn stop %s %s` calls it off\n", req.Team, req.Name, req.MaxRunning, req.Team, req.Name)
	}
	if hint := endHint(res, env); hint != "" {
		fmt.Fprintf(env.Stderr, "spawn: hint: %s\n", hint)
	}
	if res.Status == spawn.StatusExited || res.Status == spawn.StatusTimeout || (res.Status == spawn.StatusQueued && !req.NoWait) {
		return command.Condition()
	}
	return nil
}

// checkTask applies the mailbox's text rules to the task: it travels in the
// briefing and in the agent record, and must do so unmangled.
func checkTask(task string) error {
	if task == "" {
		return nil
	}
	if err := mailbox.CheckBody(task); err != nil {
		return &command.Error{Code: command.ExitUsage, Err: fmt.Errorf("task: %w", err)}
	}
	return nil
}

func explain(err error, env *command.Env) error {
	var unknown *agenttype.UnknownTypeError
	switch {
	case errors.As(err, &unknown):
		var names []string
		list, _ := agenttype.NewFinder(env.Getenv).List()
		for _, l := range list {
			names = append(names, l.Name)
		}
		if best := command.Nearest(unknown.Name, names); best != "" {
			return command.WithHint(err, "did you mean '"+best+"'?")
		}
		return command.WithHint(err, "add the type under $XDG_CONFIG_HOME/teamkit/types/<type>/ or a directory on $TEAMKIT_TYPES")
	case errors.Is(err, agenttype.ErrNoConf):
		return command.WithHint(err, "add its type.conf (see the type.conf reference in the README), or remove the directory")
	case errors.Is(err, agenttype.ErrMalformed):
		var pe *agenttype.ParseError
		if errors.As(err, &pe) && pe.UnknownKey != "" {
			if best := command.Nearest(pe.UnknownKey, agenttype.Keys); best != "" {
				return command.WithHint(err, "did you mean '"+best+"'? See the type.conf reference in the README")
			}
		}
		return command.WithHint(err, "see the type.conf reference in the README")
	case errors.Is(err, launch.ErrNoWT):
		return command.WithHint(err, launch.WTHint)
	}
	return err
}

// timeoutHint says what to check after a timeout the agent's output does
// not explain: a CLI that only said it could not reach its model, or one
// that said nothing at all.
func timeoutHint(res spawn.Result) string {
	a := res.Agent
	switch {
	case res.Status != spawn.StatusTimeout:
		return ""
	case res.Offline:
		return fmt.Sprintf("the agent's CLI could not reach its model and kept waiting, so it was stopped: check the network, a proxy (HTTPS_PROXY), and the API's base URL; `spawn log %s %s` shows its output", a.Team, a.Name)
	case len(res.Output) == 0:
		return fmt.Sprintf("the agent printed nothing: check its key or login, that its model's API is reachable, and that the CLI runs by hand (the command is in `spawn log %s %s`); a slow first turn needs a longer --timeout", a.Team, a.Name)
	}
	return ""
}

// endHint says what to do about a run that ended on its CLI's report of
// refused credentials or a usage limit, "" for any other end.
func endHint(res spawn.Result, env *command.Env) string {
	r := res.Record
	if r == nil {
		return ""
	}
	switch r.End {
	case runstream.EndFailedAuth:
		hint := "its CLI reported its credentials missing or refused (" + env.Show(r.Detail) + ")"
		if t, err := agenttype.NewFinder(env.Getenv).Find(r.Type); err == nil && !t.Conf.Auth.Empty() {
			hint += ": " + spawn.AuthHint(t.Conf.Auth)
		}
		return hint
	case runstream.EndUsageLimit, runstream.EndRateLimited:
		limit := "usage limit"
		if r.End == runstream.EndRateLimited {
			limit = "rate limit"
		}
		hint := "its CLI reported a " + limit + " (" + env.Show(r.Detail) + ")"
		if r.ResetsAt != nil {
			hint += "; it resets at " + command.FormatTime(*r.ResetsAt)
		}
		if a := res.Agent; a.ParkedUntil != nil {
			hint += fmt.Sprintf("; %s is parked: the first 'resume %s' pass after %s re-spawns it", a.Name, a.Team, command.FormatTime(*a.ParkedUntil))
		}
		return hint
	}
	return ""
}

// end is how a run that ended before it was ready ended, "" otherwise.
func end(res spawn.Result) string {
	if res.Record == nil {
		return ""
	}
	return res.Record.End
}

// reason is why a spawn ended early, "" when its status says it all.
func reason(res spawn.Result) string {
	if res.Offline {
		return "offline"
	}
	return ""
}

func report(asJSON bool, env *command.Env, res spawn.Result) error {
	a := res.Agent
	after := fmt.Sprintf("%.1fs", res.After.Seconds())
	if asJSON {
		return command.JSON(env.Stdout, struct {
			Status       string        `json:"status"`
			AfterSeconds float64       `json:"after_seconds"`
			Briefing     string        `json:"briefing"`
			Agent        mailbox.Agent `json:"agent"`
			Reason       string        `json:"reason,omitempty"`
			End          string        `json:"end,omitempty"`
		}{res.Status, res.After.Seconds(), res.Briefing, a, reason(res), end(res)})
	}
	kv := []string{"status", res.Status}
	switch res.Status {
	case spawn.StatusExited:
		code := "unknown"
		if a.ExitCode != nil {
			code = fmt.Sprint(*a.ExitCode)
		}
		kv = append(kv, "code", code, "log", a.Log, "after", after)
	default:
		kv = append(kv, "after", after)
	}
	kv = append(kv, "agent", a.Name, "team", a.Team, "type", a.Type, "run", a.Run, "pid", fmt.Sprint(a.PID))
	if res.Status != spawn.StatusExited {
		kv = append(kv, "log", a.Log)
	}
	if r := reason(res); r != "" {
		kv = append(kv, "reason", r)
	}
	if e := end(res); e != "" {
		kv = append(kv, "end", e)
	}
	// A limit end parks the agent: say until when, and whether teamkit
	// backs off because the CLI gave no reset time.
	if a.ParkedUntil != nil && res.Status == spawn.StatusExited {
		kv = append(kv, "parked_until", a.ParkedUntil.UTC().Format(time.RFC3339))
		if a.ParkBackoff > 0 {
			kv = append(kv, "backoff", a.ParkBackoff.String())
		}
	}
	return command.KV(env.Stdout, kv...)
}

// OpenPatience bounds how long a supervisor tries to reach a PostgreSQL
// server that does not answer in time (each try takes the connect timeout,
// 10 s unless the URL says otherwise); spawn waits at least
// spawn.StartRecordWait (pkg/spawn), a minute, for the run's start.
const OpenPatience = 30 * time.Second

// supervise is the hidden "__run SPEC" verb: run one agent to its end and
// record how it ended. Its own exit code is the agent's.
func supervise(c *cli.Context, env *command.Env, h Hooks) error {
	if c.NArg() != 1 {
		return command.Usagef("usage: spawn __run <spec>")
	}
	specPath := c.Args().First()
	spec, err := launch.ReadSpec(specPath)
	if err != nil {
		return err
	}
	// The spec holds the spawner's whole environment, secrets included;
	// it has served its purpose once read.
	os.Remove(specPath)
	spec.Self, err = os.Executable()
	if err != nil {
		return err
	}
	spec.Environ, spec.Pane = env.Environ(), env.Getenv("TMUX_PANE")
	if h.Step != nil {
		spec.Step = h.Step
		h.Step(StepBeforeOpen)
	}
	// A supervisor that cannot open the mailbox starts nothing: no run is
	// up unrecorded, and an answer it carries stays pending for resume. A
	// server that leaves the connection unanswered for the connect timeout
	// (busy: a burst of spawns opens dozens of connections at once) is
	// tried again, up to OpenPatience, while spawn waits for the start; a
	// refusal, or any other error, is final at once.
	var db *mailbox.DB
	launch.Retry(OpenPatience, func(context.Context) error {
		db, err = command.OpenMailboxAt(c.Context, c, env, spec.DB, "")
		if mailbox.ConnectTimedOut(err) {
			return err
		}
		return nil // open, or failed for good
	})
	if err != nil {
		return err
	}
	defer db.Close()
	code, err := launch.Supervise(c.Context, spec, db, env.Stdout, env.Stderr, env.Stdin)
	// The run's slot is free: the oldest launch queued on this host may
	// start. Launches queued with --no-wait have no spawn waiting to admit
	// them, so a busy or briefly unreachable mailbox is ridden out as the
	// run's end is: else the last of a burst could stay queued. A run
	// handed over to its guard holds its slot until the guard records its
	// end, and the guard admits then.
	if !errors.Is(err, launch.ErrHandedOver) {
		launch.Retry(launch.EndPatience, func(ctx context.Context) error {
			return spawn.Admit(ctx, db, spec.Host, spec.Self)
		})
	}
	if err != nil {
		return err
	}
	if code != 0 {
		return &command.Error{Code: code, Quiet: true}
	}
	return nil
}

// guard is the hidden "__guard" verb: watch one run's supervisor, and stop
// and record the run if the supervisor dies (launch.Guard), then admit the
// launches queued on its host, as the supervisor would have. Its spec comes
// on stdin, never on its command line, which anyone on the host can read.
func guard(c *cli.Context, env *command.Env) error {
	if c.NArg() != 0 {
		return command.Usagef("usage: spawn __guard (the run's spec on stdin)")
	}
	return launch.Guard(env.Stdin, func(ctx context.Context, path string) (*mailbox.DB, error) {
		return command.OpenMailboxAt(ctx, c, env, path, "")
	}, func(ctx context.Context, db *mailbox.DB, host string) error {
		self, err := os.Executable()
		if err != nil {
			return err
		}
		return spawn.Admit(ctx, db, host, self)
	})
}
