// Package spawn starts an agent of a type, briefed whole at spawn time, and
// for types that opt in (handshake=actas) waits until the agent's own run
// has marked ready — not merely until a process or a window exists.
//
// A spawn: takes the agent's lock (one spawn per agent at a time); refuses a
// live agent unless Replace; renders the type's template into the briefing;
// clears the ready mark; records the launch (type, task, issue, run) so
// resume can start the agent again; launches it; and then, for handshake
// types, watches the mailbox until this run's mark appears (consuming it),
// the agent exits, or the wait times out.
//
// Under a cap on the agents running on its host (Request.MaxRunning) the
// launch first waits its turn in the mailbox's queue (queue.go); with
// Request.Worktree (or worktree=yes) the agent works in a git worktree of
// its own (package worktree).
//
// Public: a Go program embedding teamkit may import this package.
package spawn

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/teamkit/teamkit/pkg/agenttype"
	"github.com/teamkit/teamkit/pkg/briefing"
	"github.com/teamkit/teamkit/pkg/launch"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/names"
	"github.com/teamkit/teamkit/pkg/proc"
	"github.com/teamkit/teamkit/pkg/roster"
	"github.com/teamkit/teamkit/pkg/runstream"
	"github.com/teamkit/teamkit/pkg/worktree"
)

// Statuses a spawn ends with.
const (
	StatusReady       = "ready"                // this run marked ready
	StatusUnconfirmed = "launched-unconfirmed" // no handshake: only the process is known to be up
	StatusExited      = "exited"               // the agent ended before it marked
	StatusTimeout     = "timeout"              // no mark within the wait
)

// MinHandshakeWait is the least a handshake type is waited for unless
// --timeout says otherwise: codex's first turn was measured at 143–187 s.
const MinHandshakeWait = 300 * time.Second

// NoHandshakeGrace is how long a spawn of a type without a handshake
// watches its agent before calling it launched: an agent whose CLI rejects
// its argv, or is not logged in, exits well within it, and is reported as
// exited, with its code and last output, instead of launched.
const NoHandshakeGrace = 2 * time.Second

// StartRecordWait bounds how long a spawn of a type without a handshake
// waits, past its grace, for the supervisor to record the run as started.
// Until it has, the agent has not started (the supervisor starts it only
// once the record is in, and a run carrying an answer is delivered by that
// record), so "launched" would be a guess: on a loaded machine the
// supervisor was measured taking longer than the grace to get there.
const StartRecordWait = 60 * time.Second

// OutputLines is how many of the agent's last output lines a spawn that
// ends exited or timed out reports.
const OutputLines = 10

// Errors a caller maps to exit codes and hints.
var (
	ErrBusy  = errors.New("another spawn of this agent is in progress")
	ErrAlive = errors.New("agent is already running")
	// ErrNamesake: the team has an agent whose name, or its team's, differs
	// from the new agent's only in case.
	ErrNamesake = errors.New("another agent's name differs from this one only in case")
	// ErrSuperseded: the agent's record no longer names Request.IfRun.
	ErrSuperseded = errors.New("the agent was launched again meanwhile")
)

// Request is one spawn.
type Request struct {
	Type, Team, Name string
	Task             string
	Issue            string
	Workdir          string
	// ResumeOf is recorded on the launch: the resume that made it
	// (escalate.ResumeKey), "" for any other spawn.
	ResumeOf string
	// Run is the launch id to use ("" for a new one): resume records it on
	// the ask before the launch. Ask is that ask, whose answer the run's
	// supervisor records as delivered before it starts the agent.
	Run string
	Ask int64
	// IfRun, when set, makes the launch only if the agent's record still
	// names run IfRun once the agent's lock is held, else ErrSuperseded:
	// a re-spawn decided on that run (a park's end, a wake) is not made
	// once another launch, a person's spawn say, has replaced it.
	IfRun string
	// Continue, for a re-spawn, asks to continue the last run's CLI
	// session (session.go); nil for a person's spawn.
	Continue *Continuation
	// Timeout overrides the handshake wait when > 0; for a type without a
	// handshake, it is how long spawn watches for an early exit instead of
	// NoHandshakeGrace.
	Timeout time.Duration
	// Replace stops a live agent of the same name first.
	Replace bool
	// Worktree runs the agent in a git worktree of its own, made from the
	// repository holding Workdir, on branch teamkit/<team>/<name> (also
	// type.conf worktree=yes).
	Worktree bool
	// Wake records the agent as woken by mail (also type.conf
	// wake=mail): once this run has ended normally, new mail to it makes
	// resume re-spawn it (escalate.Resumer).
	Wake bool
	// MaxRunning > 0 caps the agents running on Host: a spawn beyond it
	// waits in the host's queue, in state queued, and starts when a slot
	// frees, oldest first. It waits as Timeout allows (without one, until
	// its turn), or not at all with NoWait: then it returns StatusQueued
	// and the queue starts it later (Admit).
	MaxRunning int
	NoWait     bool
	// Budget is what each run may use before its supervisor stops it and
	// asks whether to go on (see budget for where else it comes from).
	Budget mailbox.Budget
	// NoAuthCheck skips CheckAuth, for credentials spawn cannot see.
	NoAuthCheck bool
	// DBPath is exported to the agent as TEAMKIT_DB (made absolute).
	DBPath string
	// StateDir holds run files (briefings, logs, specs) and the
	// built-in types written out: $XDG_STATE_HOME/teamkit.
	StateDir string
	// Environ is the spawner's environment, which the agent inherits.
	Environ []string
	// Self is the spawn executable, started again as the supervisor.
	Self string
	// Host names this machine in the agent's record (roster.HostName).
	Host string
	// Heartbeat is how often the supervisor renews the run's heartbeat
	// (0: roster.DefaultHeartbeat); Grace how long a stopped agent gets
	// between SIGTERM and SIGKILL (0: launch.DefaultGrace).
	Heartbeat, Grace time.Duration
	// Waiting, if set, is called when the handshake wait begins; the func it
	// returns when the wait ends (the command draws elapsed time meanwhile).
	// Queued is the same for a wait in the host's queue.
	Waiting, Queued func() (done func())
	// Stdin, Stdout and Stderr serve the foreground launch mode.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// Result is how a spawn ended.
type Result struct {
	Status string
	// After is the time from launch to the observed mark (or the end).
	After time.Duration
	Agent mailbox.Agent
	// Briefing is the path of the file holding the rendered briefing.
	Briefing string
	// Output is the last lines of the agent's output when it exited or
	// timed out (escaped for a terminal).
	Output []string
	// Offline is set on a timeout spawn called early: the agent's CLI
	// only said it could not reach its model, for the type's offline_after.
	Offline bool
	// Record is the run's record when it ended before it was ready: how it
	// ended (a failed-auth, a usage limit) and why, in its CLI's words.
	Record *mailbox.RunRecord
}

// Spawn starts the agent of req with finder's types and db's mailbox.
//
// Its steps, in order: prepare (check what was asked and resolve the type,
// its CLI and credentials, touching nothing), take the agent's lock, stop a
// live earlier run (stopLive), write the run's files (briefing, spec),
// record the launch, and start it (launch, then watch for its handshake).
func Spawn(ctx context.Context, db *mailbox.DB, finder agenttype.Finder, req Request) (res Result, err error) {
	j, err := prepare(ctx, finder, req)
	if err != nil {
		return Result{}, err
	}
	j.begun = time.Now()
	unlock, err := lockAgent(db, j.req)
	if err != nil {
		return Result{}, err
	}
	defer unlock()
	if run := j.req.IfRun; run != "" {
		a, err := db.Agent(ctx, j.req.Team, j.req.Name)
		if err != nil {
			return Result{}, err
		}
		if a.Run != run {
			return Result{}, fmt.Errorf("%w: %s/%s is run %s now, not %s", ErrSuperseded, j.req.Team, j.req.Name, a.Run, run)
		}
	}
	if j.prev, err = stopLive(ctx, db, j.req); err != nil {
		return Result{}, err
	}
	if err := j.checkout(ctx); err != nil {
		return Result{}, err
	}
	defer func() {
		// A worktree this spawn made that no record names (the spawn failed
		// before it recorded the launch) is not left in the repository.
		if err != nil && j.madeTree && !j.recorded {
			worktree.Undo(context.WithoutCancel(ctx), j.repo, j.worktree, j.branch, j.madeBranch)
		}
	}()
	// The spec holds the spawner's whole environment, secrets included. The
	// supervisor deletes it once read; on every path where no supervisor
	// will (the launch failed, the run is over), it goes here, and so does
	// the briefing of a run that never started (it holds the task, and no
	// record points at it).
	defer func() {
		if !j.launched || res.Status == StatusExited || res.Status == StatusTimeout {
			os.Remove(j.specFile)
		}
		if !j.launched {
			os.Remove(j.promptFile)
		}
	}()
	if c := j.req.Continue; c != nil && c.Session != "" && j.t.Conf.Output == runstream.Codex {
		if j.sessionBase, err = db.SessionTokens(ctx, j.req.Team, j.req.Name, c.Session); err != nil {
			return Result{}, err
		}
	}
	if err := j.writeRun(); err != nil {
		return Result{}, err
	}
	if j.req.MaxRunning > 0 {
		res, err = j.queued(ctx, db)
	} else {
		if err := j.record(ctx, db); err != nil {
			return Result{}, err
		}
		res, err = j.start(ctx, db)
	}
	if err != nil {
		return res, err
	}
	return j.fallBack(ctx, db, res)
}

// queued is the rest of a spawn under a cap: it waits in its host's queue
// (job.queue), then goes on as an uncapped spawn would once admitted.
func (j *job) queued(ctx context.Context, db *mailbox.DB) (Result, error) {
	a, waits, err := j.queue(ctx, db)
	if err != nil {
		return Result{}, err
	}
	res := Result{Briefing: j.promptFile, Agent: a}
	switch {
	case waits:
		res.Status, res.After = StatusQueued, time.Since(j.begun)
		return res, nil
	case j.t.Conf.Launch == agenttype.LaunchForeground && a.State == mailbox.StateStarting:
		return j.start(ctx, db)
	case a.State == mailbox.StateExited && a.PID == 0:
		// Called off in the queue (spawn stop): it never ran.
		res.Status, res.After = StatusExited, time.Since(j.begun)
		return res, nil
	}
	// Admitted, and its supervisor started by whoever admitted it: the
	// handshake waits for what the queue left of --timeout.
	req := j.req
	if req.Timeout > 0 {
		req.Timeout = max(req.Timeout-time.Since(j.begun), NoHandshakeGrace)
	}
	return watch(ctx, db, j.t, req, j.run, roster.Identity(a), res, time.Now())
}

// job is one spawn as its steps fill it in.
type job struct {
	req Request
	t   *agenttype.Type
	// cli is the type's CLI resolved by prepare, "" when its argv0 holds a
	// placeholder and is resolved once the run's variables are known.
	cli string
	// dbPath is the mailbox, made absolute when it is a file.
	dbPath string
	// repo is the spawner's repository a worktree is made from, and
	// worktree and branch that worktree ("" when the agent has none).
	repo, worktree, branch string
	// madeTree and madeBranch: checkout made them (worktree.Make);
	// recorded: a record (or the queue) names the launch.
	madeTree, madeBranch, recorded bool
	// prev is the agent's record as the spawn found it under its lock
	// (nil: none), which its launch's record replaces (job.record).
	prev *mailbox.Agent

	// Set by writeRun.
	run                           string
	promptFile, logFile, specFile string
	env                           []string
	spec                          launch.Spec
	// budget is the launch's (set by prepare).
	budget mailbox.Budget
	// sessionBase is what the session a continuation resumes had used
	// before it (launch.Spec.SessionBase).
	sessionBase mailbox.Tokens
	// launched: a supervisor took the run over (or foreground ran it),
	// or the host's queue holds it (it starts from its files later).
	launched bool
	// begun is when the spawn began: a queued spawn's --timeout counts
	// from it.
	begun time.Time
}

// prepare checks req's names and workdir and resolves its type, the type's
// CLI and credentials, before anything is touched: a missing key is a hint
// now, not a failed run minutes later.
func prepare(ctx context.Context, finder agenttype.Finder, req Request) (*job, error) {
	for _, n := range [][2]string{{"team", req.Team}, {"agent", req.Name}} {
		if err := names.Check(n[0], n[1]); err != nil {
			return nil, err
		}
	}
	t, err := finder.Find(req.Type)
	if err != nil {
		return nil, err
	}
	if err := launch.Supported(string(t.Conf.Launch)); err != nil {
		return nil, fmt.Errorf("type %s: %w", t.Name, err)
	}
	if req.MaxRunning > 0 && req.NoWait && t.Conf.Launch == agenttype.LaunchForeground {
		// Only its own spawn starts a foreground launch (Admit does not):
		// left queued, it would be admitted into a slot and never run.
		return nil, fmt.Errorf("type %s runs in the foreground, on spawn's own terminal: --no-wait would leave it queued with no spawn to start it", t.Name)
	}
	if req.Workdir == "" {
		if req.Workdir, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	given := req.Workdir
	if req.Workdir, err = filepath.Abs(req.Workdir); err != nil {
		return nil, err
	}
	if st, err := os.Stat(req.Workdir); err != nil || !st.IsDir() {
		if mailbox.IsURL(given) {
			// A repository's URL may carry its credentials: the path
			// made of it would print them.
			return nil, fmt.Errorf("workdir %s is a URL, not a directory", mailbox.Redact(given))
		}
		return nil, fmt.Errorf("workdir %s is not a directory", req.Workdir)
	}
	j := &job{req: req, t: t, dbPath: req.DBPath}
	if c := req.Continue; c != nil && c.Session != "" {
		// A session id that is not one (it would reach the CLI's argv as
		// an option, or holds blanks or control characters) is no session
		// to continue, whoever recorded it: the full briefing, and why.
		if err := runstream.CheckSession(c.Session); err != nil {
			j.req.Continue = &Continuation{Why: err.Error(), News: c.News}
		}
	}
	if j.budget, err = budget(req, t.Conf); err != nil {
		return nil, err
	}
	if argv0 := t.Conf.Command[0]; !strings.Contains(argv0, "{") {
		if j.cli, err = ResolveCLI(t.Name, argv0, t.Conf.Install, AgentEnv(req.Environ, t.Conf, nil)); err != nil {
			return nil, err
		}
	}
	if !req.NoAuthCheck {
		if err := CheckAuth(t, AgentEnv(req.Environ, t.Conf, nil)); err != nil {
			return nil, err
		}
	}
	if !mailbox.IsURL(j.dbPath) {
		if j.dbPath, err = filepath.Abs(j.dbPath); err != nil {
			return nil, err
		}
	}
	if err := j.planWorktree(ctx); err != nil {
		return nil, err
	}
	if j.req.Heartbeat <= 0 {
		j.req.Heartbeat = roster.DefaultHeartbeat
	}
	if j.req.Grace <= 0 {
		j.req.Grace = launch.DefaultGrace
	}
	return j, nil
}

// lockAgent takes the agent's spawn lock (one spawn per agent at a time,
// across hosts) and returns its release.
func lockAgent(db *mailbox.DB, req Request) (unlock func(), err error) {
	lock, err := db.Lock(req.Team, req.Name+".spawn")
	if err != nil {
		return nil, err
	}
	locked, err := lock.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock agent %s/%s: %w", req.Team, req.Name, err)
	}
	if !locked {
		return nil, fmt.Errorf("%w: %s/%s", ErrBusy, req.Team, req.Name)
	}
	return func() { lock.Unlock() }, nil
}

// writeRun names the run and writes its files into the agent's private
// run directory: the rendered briefing and the supervisor's spec (argv,
// environment, workdir).
func (j *job) writeRun() error {
	req, t := j.req, j.t
	j.run = req.Run
	if j.run == "" {
		j.run = NewRun(time.Now())
	}
	runDir := mailbox.AgentRunDir(mailbox.RunsDir(req.StateDir, j.dbPath), req.Team, req.Name)
	if err := os.MkdirAll(runDir, 0o700); err != nil {
		return fmt.Errorf("create run directory: %w", err)
	}
	// Briefings, logs and specs are the agent's secrets: its directory is
	// private even if it was made by hand, or by an older teamkit.
	if err := launch.Private(runDir); err != nil {
		return fmt.Errorf("make run directory private: %w", err)
	}
	base := filepath.Join(runDir, j.run)
	j.promptFile, j.logFile, j.specFile = base+".briefing.md", base+".log", base+".spec.json"

	cmds := Commands(req.Environ, req.Self)
	text, err := briefing.Render(t.Source+"/"+t.Name+"/template.md", t.Template, briefing.Data{
		Team: req.Team, Name: req.Name, Type: t.Name, Run: j.run, Issue: req.Issue, Task: req.Task,
		Monitor: t.Conf.Monitor, Commands: cmds,
	})
	if err != nil {
		return err
	}
	typeDir, err := t.Materialize(filepath.Join(req.StateDir, "types"))
	if err != nil {
		return err
	}
	vars := agenttype.Vars{Name: req.Name, Team: req.Team, Workdir: req.Workdir, TypeDir: typeDir, PromptFile: j.promptFile,
		Ready: cmds.Ready, Inbox: cmds.Inbox, Ask: cmds.Ask}
	text, argv, note, err := j.brief(text, briefing.WithDefaults(cmds), vars)
	if err != nil {
		return fmt.Errorf("type %s: %w", t.Name, err)
	}
	if err := os.WriteFile(j.promptFile, []byte(text), 0o600); err != nil {
		return fmt.Errorf("write briefing: %w", err)
	}
	hookArgs, err := stopHookArgs(t.Conf, base, cmds, req.Team, req.Name)
	if err != nil {
		return err
	}
	argv = slices.Insert(argv, 1, hookArgs...)
	j.env = AgentEnv(req.Environ, t.Conf, map[string]string{
		"TEAMKIT_DB": j.dbPath, "TEAMKIT_TEAM": req.Team, "TEAMKIT_AGENT": req.Name,
		"TEAMKIT_RUN": j.run, "TEAMKIT_ISSUE": req.Issue,
	})
	// j.cli is command's program, resolved by prepare; a run that continues
	// a session runs resume='s, which may be another.
	if j.cli != "" && note != "continued" {
		argv[0] = j.cli
	} else if argv[0], err = ResolveCLI(t.Name, argv[0], t.Conf.Install, j.env); err != nil {
		return err
	}
	if err := batchSafe(argv[0], argv); err != nil {
		return fmt.Errorf("type %s: %w", t.Name, err)
	}
	if err := launch.CommandLineFits(argv); err != nil {
		return fmt.Errorf("type %s: %w", t.Name, &agenttype.TooLongError{Reason: err.Error()})
	}
	j.spec = launch.Spec{Argv: argv, Env: j.env, Dir: req.Workdir, Log: j.logFile, DB: j.dbPath, Team: req.Team, Name: req.Name, Run: j.run,
		Host: req.Host, Heartbeat: req.Heartbeat, Grace: req.Grace, Tmux: t.Conf.Launch == agenttype.LaunchTmux, Ask: req.Ask,
		Type: t.Name, Output: t.Conf.Output, Budget: j.budget, Briefing: note}
	if note == "continued" {
		j.spec.SessionBase = j.sessionBase
	}
	if t.Conf.Boot == agenttype.BootStdin {
		j.spec.Stdin = j.promptFile
	}
	j.spec.Console = t.Conf.Launch == agenttype.LaunchConsole || t.Conf.Launch == agenttype.LaunchWT
	if t.Conf.Launch == agenttype.LaunchWT {
		j.spec.PIDFile = base + ".pid"
	}
	if t.Conf.Launch == agenttype.LaunchForeground {
		// Supervised in this process, from j.spec: no file holds its
		// environment, and a queued launch without a spec is one its own
		// spawn starts (Admit).
		return nil
	}
	return launch.WriteSpec(j.specFile, j.spec)
}

// record records the launch (type, task, issue, run), so resume can start
// the agent again, in place of the record stopLive found, and clears the
// agent's ready mark. The mark goes after: a spawn that finds its agent
// launched again meanwhile (relaunched) must not take the other launch's.
func (j *job) record(ctx context.Context, db *mailbox.DB) error {
	req := j.req
	if err := db.ReplaceLaunch(ctx, j.agent(), j.prev); err != nil {
		return j.relaunched(ctx, db, err)
	}
	j.recorded = true
	j.dropStaleSpecs()
	if err := db.ClearReady(ctx, req.Team, req.Name); err != nil {
		return err
	}
	return db.SetBudget(ctx, req.Team, req.Name, j.run, j.budget)
}

// dropStaleSpecs removes the specs earlier spawns of the agent left in its
// run directory, this launch's aside. A spec is the spawner's whole
// environment, secrets included: one left by a spawn killed before its
// supervisor could read it would stay for good. Only once this launch's
// record is in, with the earlier run stopped, is none still waiting to be
// read: a spawn refused its record (relaunched) must leave the spec of the
// launch recorded meanwhile to that launch's supervisor.
func (j *job) dropStaleSpecs() {
	old, err := filepath.Glob(filepath.Join(filepath.Dir(j.specFile), "*.spec.json"))
	if err != nil {
		return
	}
	for _, f := range old {
		if f != j.specFile {
			os.Remove(f)
		}
	}
}

// relaunched turns a record refused because another spawn recorded its
// launch of the agent meanwhile into ErrSuperseded, naming that launch.
// Under the agent's lock none can, but on PostgreSQL the server lets a
// lock go with its session: a restart, or a connection gone silent.
func (j *job) relaunched(ctx context.Context, db *mailbox.DB, err error) error {
	if !errors.Is(err, mailbox.ErrRelaunched) {
		return err
	}
	run := "unknown"
	a, aerr := db.Agent(ctx, j.req.Team, j.req.Name)
	if aerr == nil {
		run = a.Run
	}
	if aerr != nil || (j.worktree != "" && a.Worktree == j.worktree && a.Host == j.req.Host) {
		// The other launch, on this host, names the agent's worktree (its
		// spawn found the one this spawn made), or may: its agent works
		// there, and Spawn must not undo it.
		j.madeTree, j.madeBranch = false, false
	}
	return fmt.Errorf("%s/%s: %w (run %s) by another spawn, so this one launched nothing: its lock on the agent was lost "+
		"(on PostgreSQL the server lets a lock go with its connection: a restart, a network gone silent)",
		j.req.Team, j.req.Name, ErrSuperseded, run)
}

// agent is the launch's record.
func (j *job) agent() mailbox.Agent {
	req := j.req
	return mailbox.Agent{Team: req.Team, Name: req.Name, Type: j.t.Name, Run: j.run, State: mailbox.StateStarting,
		Log: j.logFile, Issue: req.Issue, Task: req.Task, Workdir: req.Workdir, Host: req.Host, ResumeOf: req.ResumeOf,
		Worktree: j.worktree, Branch: j.branch, Wake: j.wake()}
}

// wake is the launch's Agent.Wake.
func (j *job) wake() string {
	if j.req.Wake || j.t.Conf.Wake {
		return mailbox.WakeMail
	}
	return ""
}

// planWorktree decides whether the agent gets a worktree of its own
// (Request.Worktree, type.conf worktree=yes, or a workdir that is already
// its worktree: a re-spawn by resume) and checks that one can be made:
// the workdir is in a git repository, and the branch name is one git takes.
func (j *job) planWorktree(ctx context.Context) error {
	req := j.req
	path := filepath.Join(mailbox.AgentRunDir(mailbox.RunsDir(req.StateDir, j.dbPath), req.Team, req.Name), "worktree")
	reuse := filepath.Clean(req.Workdir) == path
	if !req.Worktree && !j.t.Conf.Worktree && !reuse {
		return nil
	}
	j.worktree, j.branch = path, worktree.Branch(req.Team, req.Name)
	if reuse {
		return nil
	}
	repo, err := worktree.Repo(ctx, req.Workdir)
	if err != nil {
		return fmt.Errorf("--worktree: %w", err)
	}
	j.repo = repo
	return worktree.CheckBranch(ctx, repo, j.branch)
}

// checkout makes (or reuses) the agent's worktree, which becomes its
// workdir.
func (j *job) checkout(ctx context.Context) error {
	if j.worktree == "" {
		return nil
	}
	if j.repo != "" {
		var err error
		if j.madeTree, j.madeBranch, err = worktree.Make(ctx, j.repo, j.worktree, j.branch); err != nil {
			return fmt.Errorf("create worktree for %s/%s: %w", j.req.Team, j.req.Name, err)
		}
	}
	j.req.Workdir = j.worktree
	return nil
}

// start launches the recorded run in the type's mode and watches it: to its
// end in the foreground, else to its handshake (or NoHandshakeGrace).
func (j *job) start(ctx context.Context, db *mailbox.DB) (Result, error) {
	req, t := j.req, j.t
	res := Result{Briefing: j.promptFile}
	begun := time.Now()
	var pid int
	var err error
	switch t.Conf.Launch {
	case agenttype.LaunchForeground:
		j.launched = true
		return foreground(ctx, db, t, j.spec, req, res, begun)
	case agenttype.LaunchTmux:
		// tmux gets the spawner's environment without the agent's identity:
		// a tmux server it starts keeps that environment for every later
		// window. The agent's own environment travels in the spec.
		pid, err = launch.Tmux(ctx, req.Self, j.specFile, req.Team, req.Name, AgentEnv(req.Environ, agenttype.Conf{}, nil))
	case agenttype.LaunchWT:
		// As for tmux: a Windows Terminal that wt.exe starts keeps its
		// environment for every later tab.
		pid, err = launch.WindowsTerminal(ctx, req.Self, j.specFile, j.spec.PIDFile, req.Team, req.Name, AgentEnv(req.Environ, agenttype.Conf{}, nil))
	case agenttype.LaunchConsole:
		pid, err = launch.Console(req.Self, j.specFile, j.logFile, j.env)
	default:
		pid, err = launch.Background(req.Self, j.specFile, j.logFile, j.env)
	}
	if err != nil {
		db.SetAgentState(context.Background(), req.Team, req.Name, j.run, mailbox.StateFailed, 0, nil)
		return Result{}, err
	}
	j.launched = true
	// The agent is up: a failure from here on is not a failed launch.
	sup, err := proc.Of(pid)
	if err != nil {
		// It is gone already (and maybe reaped): the record says how.
		sup = proc.Identity{PID: pid}
	}
	if err := db.SetAgentPID(ctx, req.Team, req.Name, j.run, mailbox.Process{PID: sup.PID, Start: sup.Start, Boot: sup.Boot, Host: req.Host}); err != nil {
		return Result{}, err
	}
	return watch(ctx, db, t, req, j.run, sup, res, begun)
}

// watch follows the launched run: for a handshake type until its mark, its
// exit or the timeout (which stops it); for a type without one, for
// NoHandshakeGrace (or the timeout given), so an agent that dies at once is
// reported as exited.
func watch(ctx context.Context, db *mailbox.DB, t *agenttype.Type, req Request, run string, sup proc.Identity, res Result, start time.Time) (Result, error) {
	needMark := t.Conf.Handshake == agenttype.HandshakeActAs
	wait := req.Timeout
	switch {
	case needMark && wait <= 0:
		wait = max(t.Conf.ReadyTimeout, MinHandshakeWait)
	case wait <= 0:
		wait = NoHandshakeGrace
	}
	if needMark && req.Waiting != nil {
		defer req.Waiting()()
	}
	// A type without a handshake is watched past its grace until its
	// supervisor has recorded the start (the state is past starting), up to
	// StartRecordWait.
	graceEnd, startBy := start.Add(wait), start.Add(max(wait, StartRecordWait))
	recorded := needMark
	deadline := func() time.Time {
		if recorded {
			return graceEnd
		}
		return startBy
	}
	marked := func() (bool, error) {
		if !needMark {
			return false, nil
		}
		ok, err := db.ConsumeReady(ctx, req.Team, req.Name, run)
		if ok {
			res.Status = StatusReady
		}
		return ok, err
	}
	// offline reports whether the log's last line has said, for the type's
	// offline_after, that the CLI cannot reach its model.
	var offlineSince time.Time
	offline := func(log string) bool {
		re := t.Conf.OfflineOutput
		if re == nil {
			return false
		}
		last := LastOutput(log, 1)
		if len(last) == 0 || !re.MatchString(last[0]) {
			offlineSince = time.Time{}
			return false
		}
		if offlineSince.IsZero() {
			offlineSince = time.Now()
		}
		return time.Since(offlineSince) >= t.Conf.OfflineAfter
	}
	check := func() (bool, error) {
		if ok, err := marked(); err != nil || ok {
			return ok, err
		}
		a, err := db.Agent(ctx, req.Team, req.Name)
		if err != nil {
			return false, err
		}
		if a.Run != run {
			return false, fmt.Errorf("agent %s/%s was launched again (run %s) while this spawn waited", req.Team, req.Name, a.Run)
		}
		recorded = recorded || a.State != mailbox.StateStarting
		if offline(a.Log) {
			res.Offline = true
			return true, nil
		}
		if a.State == mailbox.StateExited || !sup.Alive() || (a.PID > 0 && !roster.Identity(a).Alive()) {
			// One more look: it may have marked just before it exited.
			if ok, err := marked(); err != nil || ok {
				return ok, err
			}
			res.Status = StatusExited
			return true, nil
		}
		// Up, recorded, and its grace over: launched (Status left unset).
		return !needMark && recorded && !time.Now().Before(graceEnd), nil
	}
	// The mailbox changes when the mark lands or the supervisor records the
	// exit, which Watch notices; a supervisor killed outright changes nothing,
	// so re-check liveness every second regardless.
	var ok bool
	var err, outage error
	for {
		next := time.Now().Add(time.Second)
		if deadline().Before(next) {
			next = deadline()
		}
		ok, err = db.Watch(ctx, req.Team, next, check)
		if err == nil && !ok && time.Now().Before(deadline()) {
			ok, err = check()
		}
		if (mailbox.Disconnected(err) || errors.Is(err, mailbox.ErrLocked)) && ctx.Err() == nil {
			// The server is restarting (Watch reconnects with backoff), or
			// another process holds the write lock past the busy timeout
			// (the mark is taken with a write): the agent is up all the
			// same, so wait on for it as long as the handshake allows, and
			// past that stop it as any run that was not ready in time.
			outage = err
			if time.Now().Before(deadline()) {
				// A moment between tries: a busy timeout set near zero
				// fails each one at once.
				t := time.NewTimer(min(time.Until(deadline()), outagePause))
				select {
				case <-ctx.Done():
				case <-t.C:
				}
				t.Stop()
				continue
			}
			ok, err = false, nil
		}
		if err != nil || ok || !time.Now().Before(deadline()) {
			break
		}
		outage = nil
	}
	if err != nil && needMark && ctx.Err() != nil {
		// Interrupted (Ctrl-C, a resume --watch told to stop) when the
		// agent may have marked already: one last look, so that an agent
		// that is up is reported up (and recorded so), not lost to the
		// interruption. Any mark of this run will do: the interrupted
		// check may have consumed it with its answer lost.
		if m, ok, cerr := db.Ready(context.WithoutCancel(ctx), req.Team, req.Name); cerr == nil && ok && m.Run == run {
			db.ConsumeReady(context.WithoutCancel(ctx), req.Team, req.Name, run)
			res.Status, err = StatusReady, nil
		} else {
			err = &UnreadyError{Err: err, Team: req.Team, Name: req.Name, Run: run}
		}
	}
	if err != nil {
		return Result{}, err
	}
	res.After = time.Since(start)
	if res.Status == "" || res.Offline {
		res.Status = StatusUnconfirmed
		if needMark || res.Offline {
			res.Status = StatusTimeout
			// A run that never became ready is not left running: it is
			// stopped like any other, and its exit recorded.
			why := fmt.Sprintf("not ready after %s", time.Since(start).Round(time.Second))
			if res.Offline {
				why = "its CLI could not reach its model"
			}
			// The end first, so that it reads timeout rather than stopped;
			// the stop even when the end cannot be recorded (the mailbox
			// still locked, say), so that the run is not left running.
			recErr := db.SetRunEnd(ctx, runstream.EndTimeout, why, mailbox.AgentRun{Team: req.Team, Name: req.Name, Run: run})
			if _, err := Stop(ctx, db, req.Team, req.Name, StopOptions{Host: req.Host, Grace: req.Grace, Run: run}); err != nil && !errors.Is(err, ErrNotRunning) {
				return Result{}, err
			}
			if recErr != nil {
				if outage != nil {
					why += " (the mailbox could not be read meanwhile: " + outage.Error() + ")"
				}
				return Result{}, fmt.Errorf("%s/%s was stopped, %s, but its end could not be recorded: %w", req.Team, req.Name, why, recErr)
			}
		}
	}
	// What the watch found is so whatever comes now: it is recorded and
	// read back even if spawn is interrupted meanwhile, rather than lost
	// (a resume pass would then report nothing for an agent that is up).
	found := context.WithoutCancel(ctx)
	if res.Status == StatusReady {
		if err := db.SetAgentState(found, req.Team, req.Name, run, mailbox.StateReady, 0, nil); err != nil {
			return Result{}, err
		}
	}
	if res.Status == StatusExited {
		// The supervisor may still be writing the code; give it a moment.
		waitForExitRecord(ctx, db, req.Team, req.Name, run)
	}
	if res.Status == StatusExited || res.Status == StatusTimeout {
		if rec, err := db.Run(found, req.Team, run); err == nil {
			res.Record = &rec
		}
	}
	res.Agent, err = db.Agent(found, req.Team, req.Name)
	if res.Status == StatusExited || res.Status == StatusTimeout {
		res.Output = LastOutput(res.Agent.Log, OutputLines)
	}
	return res, err
}

// UnreadyError is a handshake interrupted before the agent marked ready.
// The agent is left running, not stopped: it may be a resume's re-spawn
// that carries a human's answer, which a stop would lose.
type UnreadyError struct {
	Err             error // the interruption (context.Canceled)
	Team, Name, Run string
}

func (e *UnreadyError) Error() string {
	return fmt.Sprintf("%s/%s (run %s) was not ready yet: %v", e.Team, e.Name, e.Run, e.Err)
}

func (e *UnreadyError) Unwrap() error { return e.Err }

// Hint says the agent is still running and how to stop or follow it.
func (e *UnreadyError) Hint() string {
	return fmt.Sprintf("%s/%s is still running, not yet ready: 'spawn stop %s %s' stops it; 'ready check %s %s' says when it is ready",
		e.Team, e.Name, e.Team, e.Name, e.Team, e.Name)
}

// outagePause is how long watch waits between looks at a mailbox that is
// locked or unreachable.
const outagePause = 250 * time.Millisecond

func waitForExitRecord(ctx context.Context, db *mailbox.DB, team, name, run string) {
	db.Watch(ctx, team, time.Now().Add(5*time.Second), func() (bool, error) {
		a, err := db.Agent(ctx, team, name)
		return err != nil || a.Run != run || a.ExitCode != nil, nil
	})
}

// foreground supervises the agent on spawn's own terminal and returns when
// it exits: ready if this run marked meanwhile, else exited, with its
// record (its end).
func foreground(ctx context.Context, db *mailbox.DB, t *agenttype.Type, spec launch.Spec, req Request, res Result, start time.Time) (Result, error) {
	spec.Self, spec.Environ = req.Self, req.Environ
	_, err := launch.Supervise(ctx, spec, db, req.Stdout, req.Stderr, req.Stdin)
	// Its slot is free: the oldest queued launch may start. (A failure is
	// not this spawn's; the queue's waiters admit again.) A run handed
	// over to its guard holds its slot until the guard, which admits then.
	if !errors.Is(err, launch.ErrHandedOver) {
		Admit(context.WithoutCancel(ctx), db, req.Host, req.Self)
	}
	if err != nil {
		return Result{}, err
	}
	res.After = time.Since(start)
	// The run is over: it exited, unless it marked ready first (a type
	// without a handshake never does).
	res.Status = StatusExited
	if t.Conf.Handshake == agenttype.HandshakeActAs {
		if ok, err := db.ConsumeReady(ctx, spec.Team, spec.Name, spec.Run); err == nil && ok {
			res.Status = StatusReady
		}
	}
	if res.Status == StatusExited {
		if rec, err := db.Run(ctx, spec.Team, spec.Run); err == nil {
			res.Record = &rec
		}
	}
	res.Agent, err = db.Agent(ctx, req.Team, req.Name)
	return res, err
}

// stopLive refuses to start a second copy of a live agent, or with Replace
// stops the live one first. Live is judged by roster.Judge: the recorded
// supervisor's exact identity on this host, the heartbeat elsewhere. It
// returns the agent's record as it found it (nil: none yet).
func stopLive(ctx context.Context, db *mailbox.DB, req Request) (*mailbox.Agent, error) {
	a, err := db.Agent(ctx, req.Team, req.Name)
	if errors.Is(err, mailbox.ErrNotFound) {
		// A new agent: its name must not be another's but for case.
		t, n, err := db.Namesake(ctx, req.Team, req.Name)
		if err == nil && n != "" {
			err = fmt.Errorf("%w: agent %s/%s is recorded, and on Windows and macOS, whose file names ignore case, %s/%s would share its files", ErrNamesake, t, n, req.Team, req.Name)
		}
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	here, err := roster.At(ctx, db, req.Host)
	if err != nil {
		return nil, err
	}
	live := a.State == mailbox.StateQueued || (a.State != mailbox.StateExited && a.State != mailbox.StateFailed && roster.Judge(a, here).Live)
	if live && !req.Replace {
		return nil, fmt.Errorf("%w: %s/%s (run %s, %s); pass --replace to stop it and start again", ErrAlive, req.Team, req.Name, a.Run, roster.Describe(&a, nil, here))
	}
	// Stop also sweeps up what an unsupervised run left behind, live or not.
	_, err = Stop(ctx, db, req.Team, req.Name, StopOptions{Host: req.Host, Grace: req.Grace})
	if err != nil && !errors.Is(err, ErrNotRunning) {
		return nil, err
	}
	return &a, nil
}

// NewRun is a launch id: sortable by time, unique by its random tail.
func NewRun(now time.Time) string {
	var b [4]byte
	rand.Read(b[:])
	return now.UTC().Format(roster.RunLayout) + "-" + hex.EncodeToString(b[:])
}

// SessionEnv are the variables an agent CLI sets for the processes of its
// own session: who the session is, and how to reach it (a socket and its
// token, an IDE server and its auth token). A spawner running inside such a
// session (claude spawning a team) must not hand them to its agents, of any
// type: they would tie the agent to the parent's session, and the tokens are
// secrets. spawn removes them from every agent's environment; a type's
// env.NAME can still set one on purpose.
var SessionEnv = []string{
	// Claude Code.
	"CLAUDECODE", "CLAUDE_PID", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SESSION_ID",
	"CLAUDE_CODE_MESSAGING_SOCKET", "CLAUDE_CODE_MESSAGING_TOKEN", "CLAUDE_CODE_CHILD_SESSION",
	"CLAUDE_CODE_EXECPATH", "CLAUDE_CODE_SESSION_ATTENDED", "CLAUDE_CODE_HOST_SESSION_ID",
	// Codex.
	"CODEX_THREAD_ID", "CODEX_SESSION_ID", "CODEX_SANDBOX", "CODEX_SANDBOX_NETWORK_DISABLED",
	// Gemini CLI (its IDE companion's server, and the token to reach it).
	"GEMINI_CLI", "GEMINI_CLI_SESSION_ID", "GEMINI_CLI_IDE_SERVER_PORT", "GEMINI_CLI_IDE_WORKSPACE_PATH",
	"GEMINI_CLI_IDE_AUTH_TOKEN", "GEMINI_CLI_IDE_PID", "GEMINI_CLI_IDE_SERVER_STDIO_COMMAND",
	"GEMINI_CLI_IDE_SERVER_STDIO_ARGS",
	// opencode (its server's login, and the session's process).
	"OPENCODE", "OPENCODE_PID", "OPENCODE_SERVER_USERNAME", "OPENCODE_SERVER_PASSWORD",
}

// AgentEnv is the agent's environment: the spawner's, less SessionEnv and
// the type's unset_env, plus the type's env.NAME entries, plus teamkit's
// identity (which nothing overrides; an empty value is removed).
func AgentEnv(environ []string, conf agenttype.Conf, identity map[string]string) []string {
	drop := map[string]bool{}
	for _, n := range SessionEnv {
		drop[n] = true
	}
	for _, n := range conf.UnsetEnv {
		drop[n] = true
	}
	set := map[string]string{}
	var order []string
	put := func(k, v string) {
		if _, ok := set[k]; !ok {
			order = append(order, k)
		}
		set[k] = v
	}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || drop[k] {
			continue
		}
		put(k, v)
	}
	for _, e := range conf.Env {
		put(e.Name, e.Value)
	}
	for _, k := range []string{"TEAMKIT_DB", "TEAMKIT_TEAM", "TEAMKIT_AGENT", "TEAMKIT_RUN", "TEAMKIT_ISSUE"} {
		if identity[k] == "" {
			delete(set, k)
			continue
		}
		put(k, identity[k])
	}
	out := make([]string, 0, len(set))
	for _, k := range order {
		if v, ok := set[k]; ok {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// Executable finds the spawn binary, which is also the run supervisor:
// this process itself when it is spawn, else the spawn installed beside it
// (resume re-spawns agents), else spawn on PATH.
func Executable() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the spawn executable: %w", err)
	}
	if base := filepath.Base(self); base == "spawn" || strings.EqualFold(base, "spawn.exe") {
		return self, nil
	}
	if sibling, err := launch.LookPath(filepath.Join(filepath.Dir(self), "spawn"), os.Environ()); err == nil {
		return sibling, nil
	}
	p, err := exec.LookPath("spawn")
	if err != nil {
		return "", fmt.Errorf("find the spawn executable (it runs each agent's supervisor): %w", err)
	}
	return filepath.Abs(p)
}

// batchMeta are the characters cmd.exe reads in a batch file's arguments,
// whatever quoting os/exec gives them.
const batchMeta = "%^!&|<>\"\r\n"

// batchSafe refuses an argv that would reach a batch file (npm installs the
// agent CLIs on Windows as .cmd shims) holding a character cmd.exe would
// read: the briefing would arrive altered, or run as commands. boot=stdin
// and boot=file hand the briefing over without cmd.exe's parser.
func batchSafe(exe string, argv []string) error {
	if !launch.BatchFile(exe) {
		return nil
	}
	for _, a := range argv[1:] {
		if i := strings.IndexAny(a, batchMeta); i >= 0 {
			return fmt.Errorf("its command %s is a batch file, which cmd.exe parses, and an argument holds %q, which cmd.exe would not pass on intact; use boot=stdin or boot=file for the briefing", exe, a[i:i+1])
		}
	}
	return nil
}
