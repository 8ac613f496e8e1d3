// Package launch starts an agent process and watches it to its end.
//
// Whatever the launch mode, the agent is started by a supervisor: a small
// process (spawn's hidden "__run" verb, or spawn itself in the foreground)
// that reads a Spec from a file, execs the agent's argv directly — never
// through a shell, never typed into a terminal — with the briefing as an
// argument, a file or stdin, then waits for it and records its pid and exit
// code in the mailbox. That record is how spawn learns at once that an agent
// died before it marked ready, and how stale tells a slow worker from a dead
// one.
//
//   - background: the supervisor runs in its own session (setsid), output to
//     a per-run log file; it outlives the spawner.
//   - tmux: the supervisor is the command of a new window in a tmux session
//     named after the team. tmux is handed only the supervisor's absolute
//     path, "__run" and the spec's path, never the briefing, so no quoting
//     layer and no command-length limit exist.
//   - foreground: spawn supervises the agent itself, on its own terminal.
//   - console (Windows): the supervisor runs in a new console window of its
//     own; it copies the agent's output to that window and to the log.
//   - wt (Windows): the supervisor is the command of a new Windows Terminal
//     tab (wt.exe), handed only the same three words as tmux; it copies the
//     agent's output to the tab and to the log, and reports its pid through
//     a file, since wt.exe only passes the command on to Windows Terminal.
//
// Public: a Go program embedding teamkit may import this package.
package launch

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/proc"
	"github.com/teamkit/teamkit/pkg/runstream"
	"github.com/teamkit/teamkit/pkg/text"
)

// Spec is everything the supervisor needs to start one agent run.
type Spec struct {
	Argv []string `json:"argv"`
	// Env is the agent's whole environment.
	Env []string `json:"env"`
	Dir string   `json:"dir"`
	// Stdin is a file given to the agent as standard input (boot=stdin);
	// "" means /dev/null in the background and the terminal otherwise.
	Stdin string `json:"stdin"`
	// Log receives the agent's output in the background (and in tmux, where
	// the pane's output is piped into it), and the supervisor's own notes in
	// every mode.
	Log  string `json:"log"`
	DB   string `json:"db"`
	Team string `json:"team"`
	Name string `json:"name"`
	Run  string `json:"run"`
	// Host is recorded with the run; Heartbeat is how often the supervisor
	// renews the run's heartbeat; Grace is how long a stopped agent's
	// processes get between SIGTERM and SIGKILL.
	Host      string        `json:"host"`
	Heartbeat time.Duration `json:"heartbeat"`
	Grace     time.Duration `json:"grace"`
	// Tmux: the supervisor runs in a tmux pane, whose output it pipes into
	// Log before the agent starts, so an agent's last words survive the
	// window.
	Tmux bool `json:"tmux"`
	// Console: the supervisor has a console of its own (launch=console or
	// wt), where the agent's output is shown while it also goes to Log; the
	// agent reads that console's keyboard unless Stdin is set.
	Console bool `json:"console,omitempty"`
	// PIDFile, when set, is where the supervisor writes its pid before
	// anything else, for a launcher that does not see it start (wt).
	PIDFile string `json:"pid_file,omitempty"`
	// Ask is the ask whose answer this run carries (a re-spawn by resume),
	// 0 for any other run: the supervisor records the answer as delivered
	// before it starts the agent, and starts it only if it could
	// (mailbox.DB.StartRun).
	Ask int64 `json:"ask,omitempty"`
	// Type is the agent's type, for the run's record; Output the format of
	// the structured stream its CLI writes on stdout (runstream.Formats),
	// which the supervisor reads instead of passing it on as it is.
	Type   string `json:"type,omitempty"`
	Output string `json:"output,omitempty"`
	// Budget is what the run may use (read from its stream) before the
	// supervisor stops it and files one ask to go on (budget.go).
	Budget mailbox.Budget `json:"budget,omitzero"`
	// SessionBase is what the CLI session this run continues had used
	// before it, for a CLI that reports a session's usage since it began
	// (runstream.Reader.Base).
	SessionBase mailbox.Tokens `json:"session_base,omitzero"`
	// Briefing is how the run was briefed, for its record
	// (mailbox.RunRecord.Briefing).
	Briefing string `json:"briefing,omitempty"`
	// Raw holds the values above that are not UTF-8 (a Latin-1 directory
	// name, an environment variable's bytes), base64, by where they go
	// (rawFields): JSON would replace their bytes with U+FFFD.
	Raw map[string]string `json:"raw,omitempty"`

	// Set by the supervisor process itself, never by the spawner: its own
	// executable (to start the guard), its environment, and its tmux pane.
	Self    string   `json:"-"`
	Environ []string `json:"-"`
	Pane    string   `json:"-"`
	// Step, when set, is called at each step of the start (Step*); only
	// the test binary sets it, to inject faults there.
	Step func(point string) `json:"-"`
}

// Steps of a supervisor's start, where Spec.Step is called.
const (
	StepBeforeStart = "supervisor-before-start" // guard up, start not recorded
	StepAfterRecord = "supervisor-after-record" // start recorded, agent not started
	StepAfterStart  = "supervisor-after-start"  // agent started, guard told
	StepAfterExit   = "supervisor-after-exit"   // exit recorded, supervisor not yet gone
)

func (s Spec) step(point string) {
	if s.Step != nil {
		s.Step(point)
	}
}

// Marker is the environment entry every process of run inherits: how the
// run's processes are found wherever they moved in the process tree.
func Marker(run string) string { return "TEAMKIT_RUN=" + run }

// DefaultGrace is how long a stopped agent gets between SIGTERM and SIGKILL.
const DefaultGrace = 10 * time.Second

// WriteSpec stores s at path, readable by its owner only (the environment
// holds the spawner's secrets).
func WriteSpec(path string, s Spec) error {
	s.Argv, s.Env = slices.Clone(s.Argv), slices.Clone(s.Env)
	s.Raw = moveRaw(s.rawFields())
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("write run spec: %w", err)
	}
	return nil
}

// rawFields are the spec's values that may hold any bytes, by name.
func (s *Spec) rawFields() map[string]*string {
	f := map[string]*string{"dir": &s.Dir, "stdin": &s.Stdin, "log": &s.Log, "db": &s.DB, "host": &s.Host,
		"pid_file": &s.PIDFile, "briefing": &s.Briefing}
	for i := range s.Argv {
		f["argv."+strconv.Itoa(i)] = &s.Argv[i]
	}
	for i := range s.Env {
		f["env."+strconv.Itoa(i)] = &s.Env[i]
	}
	return f
}

// moveRaw takes the values of fields that are not UTF-8 out, base64, by
// name, leaving "" in their place; nil when all are UTF-8.
func moveRaw(fields map[string]*string) map[string]string {
	var raw map[string]string
	for name, p := range fields {
		if !utf8.ValidString(*p) {
			if raw == nil {
				raw = map[string]string{}
			}
			raw[name] = base64.StdEncoding.EncodeToString([]byte(*p))
			*p = ""
		}
	}
	return raw
}

// restoreRaw puts moveRaw's values back into fields.
func restoreRaw(raw map[string]string, fields map[string]*string) error {
	for name, v := range raw {
		p, ok := fields[name]
		b, err := base64.StdEncoding.DecodeString(v)
		if !ok || err != nil {
			return fmt.Errorf("its raw value %q is not one of its fields", name)
		}
		*p = string(b)
	}
	return nil
}

// ReadSpec loads a Spec written by WriteSpec.
func ReadSpec(path string) (Spec, error) {
	var s Spec
	data, err := os.ReadFile(path)
	if err != nil {
		return s, fmt.Errorf("read run spec: %w", err)
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, fmt.Errorf("read run spec %s: %w", path, err)
	}
	if err := restoreRaw(s.Raw, s.rawFields()); err != nil {
		return s, fmt.Errorf("read run spec %s: %w", path, err)
	}
	s.Raw = nil
	if len(s.Argv) == 0 {
		return s, fmt.Errorf("run spec %s has no command", path)
	}
	return s, nil
}

// LookPath resolves argv0 against the PATH of the agent's environment, so a
// missing or non-executable command is reported by spawn before anything
// starts. What makes a file executable is the OS's rule (see executable):
// the execute bit on Unix, PATHEXT on Windows.
func LookPath(argv0 string, env []string) (string, error) {
	if filepath.Base(argv0) != argv0 || filepath.IsAbs(argv0) {
		if p, ok := executable(argv0, env); ok {
			return p, nil
		}
		if _, err := os.Stat(argv0); err != nil {
			return "", fmt.Errorf("command %s: %w", argv0, err)
		}
		return "", fmt.Errorf("command %s is not executable", argv0)
	}
	for _, dir := range filepath.SplitList(getenv(env, "PATH")) {
		if dir == "" {
			dir = "."
		}
		if p, ok := executable(filepath.Join(dir, argv0), env); ok {
			return p, nil
		}
	}
	return "", fmt.Errorf("command %q not found in the agent's PATH", argv0)
}

// Supervise runs the agent of spec to its end and returns its exit code (128
// plus the signal number when a signal killed it). It records the run as
// running with this process's exact identity (pid, start time, boot id) and
// host, renews the run's heartbeat while the agent lives, then records the
// exit code; the run's log notes both. stdout and stderr are where the
// agent's output goes.
//
// The supervisor adopts every orphaned descendant of its agent (it is a
// child subreaper), and when the agent ends, whatever it left running is
// stopped too: no child outlives the run. A guard process (see Guard)
// watches the supervisor itself: if the supervisor dies, the guard stops the
// agent's processes and records the run as exited, so no agent ever runs
// unsupervised.
//
// SIGTERM sent to the supervisor stops the run: SIGTERM to every process of
// the agent, SIGKILL to what remains after spec.Grace. SIGINT and SIGHUP are
// not passed on: they come from the terminal (tmux, foreground) or are sent
// to the process group, and so reach the agent already; passing them on
// would deliver them twice, and some agent CLIs quit on a second Ctrl-C.
// The one exception is a tmux window closing: its hangup reaches only the
// supervisor (the session leader), so in tmux a SIGHUP stops the run too,
// as closing a console window does on Windows.
//
// Before the agent starts there is no agent to reach: a run not started
// whose answer is being given back through an outage (up to an hour) ends
// on any of the three, leaving the give-back to the guard, which takes it
// over once this process exits, then records the run's end and admits the
// launches queued on its host: the error then wraps ErrHandedOver. A caller
// that goes on living afterwards holds the guard off until it does.
func Supervise(ctx context.Context, spec Spec, db *mailbox.DB, stdout, stderr io.Writer, stdin io.Reader) (int, error) {
	if spec.Grace <= 0 {
		spec.Grace = DefaultGrace
	}
	announce(spec)
	path, err := LookPath(spec.Argv[0], spec.Env)
	if err != nil {
		recordExit(db, spec, 127, nil)
		return 127, err
	}
	cmd := &exec.Cmd{Path: path, Args: spec.Argv, Env: spec.Env, Dir: spec.Dir, Stdout: stdout, Stderr: stderr, Stdin: stdin}
	if spec.Console {
		defer onConsole(spec, cmd)()
	}
	if spec.Stdin != "" {
		f, err := os.Open(spec.Stdin)
		if err != nil {
			recordExit(db, spec, 127, nil)
			return 127, fmt.Errorf("open briefing for stdin: %w", err)
		}
		defer f.Close()
		cmd.Stdin = f
	}
	if spec.Tmux {
		capturePane(spec)
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	self, err := proc.Self()
	if err != nil {
		note(spec, "cannot read this supervisor's identity: %v", err)
	}
	// The guard comes first: there is no moment when the agent runs and a
	// SIGKILL of the supervisor would go unnoticed.
	guard, err := startGuard(spec, self)
	if err != nil {
		note(spec, "no guard for this run: %v", err)
	}
	spec.step(StepBeforeStart)
	// The start is recorded before the agent starts, and the agent starts
	// only if it was: a run that carries an answer is then delivered exactly
	// when its agent runs (a supervisor that cannot reach the mailbox, or
	// whose launch resume withdrew, starts nothing and the answer stays
	// pending), and no run is ever up unrecorded.
	if err := startRun(ctx, db, spec, self); err != nil {
		note(spec, "agent %s/%s run %s not started: %v", spec.Team, spec.Name, spec.Run, err)
		notStarted := fmt.Errorf("agent not started: %w", err)
		if spec.Ask != 0 && !errors.Is(err, mailbox.ErrWithdrawn) && !errors.Is(err, mailbox.ErrSuperseded) {
			// The commit may have landed with its acknowledgement lost,
			// the answer then counted as delivered by a run that never
			// starts: it is given back through the outage that lost it,
			// by the guard should this supervisor be killed meanwhile.
			givenBack := make(chan struct{})
			go func() { unstart(db, spec); close(givenBack) }()
			// That may take the outage's length (up to an hour): told to
			// stop meanwhile (with no agent, a Ctrl-C or a hangup is for
			// the supervisor too), it leaves the give-back to its guard,
			// which takes it over as it would on a SIGKILL.
			var stops <-chan os.Signal
			if guard != nil {
				stops = sigs
			}
			select {
			case <-givenBack:
			case s := <-stops:
				note(spec, "stopped (%v) while giving the answer back: its guard gives it back", s)
				guard.handOver()
				return 1, fmt.Errorf("%w; %w", notStarted, ErrHandedOver)
			}
		}
		recordEnd(db, spec, nil)
		guard.release()
		return 1, notStarted
	}
	spec.step(StepAfterRecord)
	rec := mailbox.RunRecord{Team: spec.Team, Name: spec.Name, Run: spec.Run, Type: spec.Type, StartedAt: time.Now(), Briefing: spec.Briefing}
	recordRun(db, spec, rec)
	// With a structured stream, the agent's stdout is a pipe the supervisor
	// reads; what it makes readable goes where the output would have gone.
	var st *stream
	var fatal, over <-chan struct{}
	var pr, pw *os.File
	if spec.Output != "" && spec.Output != runstream.None {
		if pr, pw, err = os.Pipe(); err != nil {
			note(spec, "the agent's stream is not read: %v", err)
		} else {
			cmd.Stdout = pw
			st = readStream(spec, pr, stdout)
			fatal, over = st.fatal, st.over
			defer pr.Close()
		}
	}
	group := proc.Group{Marker: Marker(spec.Run), Exclude: []int{self.PID, guard.pid()}}
	tree, err := proc.StartTree(cmd, group, func(format string, args ...any) { note(spec, format, args...) })
	if pw != nil {
		pw.Close()
	}
	if err != nil {
		unstart(db, spec)
		guard.release()
		ended, code := time.Now(), 127
		rec.EndedAt, rec.ExitCode, rec.End, rec.Detail = &ended, &code, runstream.EndCrashed, text.OneLine(fmt.Sprintf("start %s: %v", spec.Argv[0], err))
		recordExit(db, spec, 127, &rec)
		return 127, fmt.Errorf("start %s: %w", spec.Argv[0], err)
	}
	guard.started()
	spec.step(StepAfterStart)
	note(spec, "agent %s/%s run %s started, pid %d, supervisor %d, guard %d", spec.Team, spec.Name, spec.Run, cmd.Process.Pid, self.PID, guard.pid())

	var beat <-chan time.Time
	if spec.Heartbeat > 0 {
		t := time.NewTicker(spec.Heartbeat)
		defer t.Stop()
		beat = t.C
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var waitErr error
	stopping, failed := false, false
	budget := "" // the run's detail once it reached its budget
	stop := func() {
		if !stopping {
			stopping = true
			note(spec, "stopping agent %s/%s run %s (force after %s)", spec.Team, spec.Name, spec.Run, spec.Grace)
			go tree.Stop(spec.Grace)
		}
	}
	for waiting := true; waiting; {
		select {
		case s := <-sigs:
			if stopSignal(s, spec) {
				stop()
			}
		case <-tree.StopRequests():
			stop()
		case <-fatal:
			// Bad credentials or a usage limit: no retry of the CLI's can
			// help, so the run ends now rather than at its handshake's end.
			fatal, failed = nil, true
			st.mu.Lock()
			end, detail := st.r.End(0)
			st.mu.Unlock()
			note(spec, "the agent's CLI reported %s: %s", end, detail)
			stop()
		case <-over:
			over, failed = nil, true
			budget = budgetReached(db, spec, st)
			stop()
		case <-beat:
			if err := db.Heartbeat(ctx, spec.Team, spec.Name, spec.Run, time.Since(lastEvent(spec, rec.StartedAt, st))); err != nil {
				note(spec, "%v", err)
			}
			if st != nil {
				// The tokens so far, for spawn list while the run goes on.
				now := rec
				st.fill(&now, 0)
				db.RecordUsage(ctx, now)
			}
		case waitErr = <-done:
			waiting = false
		}
	}
	code := ExitCode(cmd.ProcessState, waitErr)
	ended := time.Now()
	rec.EndedAt, rec.ExitCode = &ended, &code
	if st != nil {
		// The stream's last events come just before the CLI exits.
		st.wait(2 * time.Second)
		st.stderrAtEnd(spec.Log, code)
		st.fill(&rec, code)
		if budget == "" && rec.End == runstream.EndDone && st.overAtEnd() {
			failed, budget = true, budgetReached(db, spec, st)
		}
		if budget != "" {
			rec.End, rec.Detail = runstream.EndBudget, budget
		}
	} else {
		rec.End, rec.Detail = (*runstream.Reader)(nil).End(code)
	}
	if !failed {
		// The supervisor sees only signals: whoever stopped the run said
		// why in its record (spawn stop, a handshake timeout).
		if stopping {
			rec.End, rec.Detail = runstream.EndStopped, "stopped (SIGTERM to the supervisor)"
		}
		Retry(EndPatience, func(ctx context.Context) error {
			prev, err := db.Run(ctx, spec.Team, spec.Run)
			if err == nil && prev.End != "" {
				rec.End, rec.Detail = prev.End, prev.Detail
			}
			return err
		})
	}
	// The exit note goes through the pane in tmux mode, and waits for the
	// pipe to deliver it: everything the agent wrote before it is then in
	// the log when spawn reads its tail.
	exitNote(spec, fmt.Sprintf("agent %s/%s run %s exited with code %d", spec.Team, spec.Name, spec.Run, code), stdout)
	note(spec, "run %s ended: %s", spec.Run, strings.TrimSuffix(rec.End+": "+rec.Detail, ": "))
	// The record comes before the exit, which is what spawn waits for.
	recordExit(db, spec, code, &rec)
	spec.step(StepAfterExit)
	// What the agent left running is stopped here, even when spawn stop
	// ended the run: that spawn stop may have died part way (a second
	// Ctrl-C in its grace), and then nothing else ever would.
	if left := tree.Members(); len(left) > 0 {
		note(spec, "stopping %d process(es) the agent left running: %v", len(left), left)
		tree.Stop(spec.Grace)
	}
	if st != nil && !st.wait(time.Second) {
		pr.Close()
	}
	tree.Close()
	guard.release()
	return code, nil
}

// capturePane pipes the tmux pane's output into the run's log. tmux
// expands pipe-pane's command as a format (# sequences, then strftime's %)
// and runs it through /bin/sh: pipeCommand quotes the log's path for both.
func capturePane(spec Spec) {
	if spec.Pane == "" {
		note(spec, "the pane's output is not captured (no TMUX_PANE)")
		return
	}
	tmux, err := LookPath("tmux", spec.Environ)
	if err != nil {
		note(spec, "the pane's output is not captured: %v", err)
		return
	}
	// The shell that runs cat has the tmux server's umask, which would
	// give a log it creates to every reader on the host.
	log, err := openLog(spec.Log)
	if err != nil {
		note(spec, "the pane's output is not captured: %v", err)
		return
	}
	log.Close()
	c := exec.Command(tmux, "pipe-pane", "-t", spec.Pane, pipeCommand(spec.Log))
	c.Env = spec.Environ
	if out, err := c.CombinedOutput(); err != nil {
		note(spec, "the pane's output is not captured: tmux pipe-pane: %v %s", err, strings.TrimSpace(string(out)))
	}
}

// exitNote records line in the log. In tmux mode it is written to the pane
// and awaited in the log (for a few seconds at most), so the agent's last
// output, which precedes it through the same pipe, is in the log too.
func exitNote(spec Spec, line string, pane io.Writer) {
	line = "teamkit: " + line
	if spec.Tmux && pane != nil && spec.Log != "" {
		fmt.Fprintf(pane, "\r\n%s\r\n", line)
		deadline := time.Now().Add(3 * time.Second)
		for time.Now().Before(deadline) {
			if tail, err := Tail(spec.Log, 4096); err == nil && strings.Contains(string(tail), line) {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	note(spec, "%s", strings.TrimPrefix(line, "teamkit: "))
}

// Tail returns at most the last n bytes of the file at path.
func Tail(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	off := max(st.Size()-n, 0)
	buf := make([]byte, st.Size()-off)
	_, err = f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf, nil
}

// openLog opens the run's log for appending, creating it private: it holds
// whatever the agent prints.
func openLog(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
}

// note appends one line to the run's log, in every launch mode.
func note(spec Spec, format string, args ...any) {
	if spec.Log == "" {
		return
	}
	f, err := openLog(spec.Log)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "teamkit: "+format+"\n", args...)
}

// recordExit stores the run's end: its record (rec, nil for a run that
// never started) with the park the end implies, then the exit code. It uses
// a fresh context, since the run is over even when the supervisor was told
// to stop, and retries: the exit record is how spawn and stale learn the
// agent is gone. When the mailbox stays out of reach (an outage longer than
// the retries' few seconds), the record and the code are spooled beside the
// run's files (SpoolPath) for the next command that reads the roster on
// this host to record (RecordSpooled), so neither is ever lost.
func recordExit(db *mailbox.DB, spec Spec, code int, rec *mailbox.RunRecord) {
	recorded := rec == nil || recordRun(db, spec, *rec)
	if recordEnd(db, spec, &code) == nil && recorded || spec.Log == "" {
		return
	}
	path := SpoolPath(filepath.Dir(spec.Log), spec.Run)
	if err := spool(path, spooled{ExitCode: code, Run: rec}); err != nil {
		note(spec, "could not spool the run's end either: %v", err)
		return
	}
	note(spec, "exit code %d and the run's record spooled in %s, to be recorded once the mailbox is back", code, path)
}

// StartPatience is how long a run's start is retried while the mailbox's
// write lock is busy (mailbox.ErrLocked), counted from the first try (the
// last try may wait its busy timeout past it). In a burst of a hundred
// spawns on a loaded machine one writer was measured losing the lock to
// the others for all of SQLite's busy timeout: its busy handler sleeps up
// to 100 ms between tries and the lock goes to whoever asks while it
// sleeps. A spawn watches for the start for spawn.StartRecordWait.
const StartPatience = 30 * time.Second

// startRun records the start of spec's run by supervisor self, retrying
// while the mailbox is locked (StartPatience). Any other failure is final:
// a supervisor that cannot reach the mailbox starts nothing.
func startRun(ctx context.Context, db *mailbox.DB, spec Spec, self proc.Identity) error {
	p := mailbox.Process{PID: self.PID, Start: self.Start, Boot: self.Boot, Host: spec.Host, Heartbeat: spec.Heartbeat}
	deadline := time.Now().Add(StartPatience)
	err := db.StartRun(ctx, spec.Team, spec.Name, spec.Run, p, spec.Ask)
	for wait := 100 * time.Millisecond; errors.Is(err, mailbox.ErrLocked) && time.Now().Add(wait).Before(deadline); wait = min(2*wait, 5*time.Second) {
		note(spec, "recording the start of run %s: %v; trying again", spec.Run, err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		err = db.StartRun(ctx, spec.Team, spec.Name, spec.Run, p, spec.Ask)
	}
	return err
}

// recordEnd records the run as exited, with code when known.
func recordEnd(db *mailbox.DB, spec Spec, code *int) error {
	err := Retry(EndPatience, func(ctx context.Context) error {
		return db.SetAgentState(ctx, spec.Team, spec.Name, spec.Run, mailbox.StateExited, 0, code)
	})
	if err != nil {
		note(spec, "could not record the exit code: %v", err)
	}
	return err
}

// ErrHandedOver is Supervise's error when it left the rest of the run,
// the give-back of its answer and its end, to its guard.
var ErrHandedOver = errors.New("its guard gives the answer back")

// EndPatience is how long a run's end is retried; GiveBackPatience how long
// the answer of a run whose agent never started is: until it is given back
// the answer counts as delivered, so it outlasts any outage a pass would.
const (
	EndPatience      = 3 * time.Second
	GiveBackPatience = time.Hour
)

// unstart gives back the answer of a run whose agent never started (see
// mailbox.DB.UnstartRun), so resume delivers it with another run.
func unstart(db *mailbox.DB, spec Spec) error {
	if spec.Ask == 0 {
		return nil
	}
	err := Retry(GiveBackPatience, func(ctx context.Context) error { return db.UnstartRun(ctx, spec.Ask, spec.Run) })
	if err != nil {
		note(spec, "could not give back the answer to ask %d, which run %s never delivered: %v", spec.Ask, spec.Run, err)
	} else {
		note(spec, "the answer to ask %d was not delivered by run %s; resume delivers it again", spec.Ask, spec.Run)
	}
	return err
}

// stopSignal reports whether s, received by the supervisor, stops its run:
// SIGTERM (spawn stop), or SIGHUP in tmux mode (the pane closed). SIGINT
// is the agent's own to handle (a Ctrl-C in the foreground reaches both).
func stopSignal(s os.Signal, spec Spec) bool {
	return s == syscall.SIGTERM || (s == syscall.SIGHUP && spec.Tmux)
}

// Retry runs write, each time with a fresh context (the run's end matters
// even when the supervisor was told to stop), until it succeeds or patience
// has passed, backing off from 100 ms to 10 s: a database restarting or
// briefly full is ridden out.
func Retry(patience time.Duration, write func(ctx context.Context) error) error {
	deadline := time.Now().Add(patience)
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 10*time.Second) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := write(ctx)
		cancel()
		if err == nil || time.Now().Add(wait).After(deadline) {
			return err
		}
		time.Sleep(wait)
	}
}

// ExitCode is the shell's view of how a process ended.
func ExitCode(ps *os.ProcessState, err error) int {
	if ps == nil {
		if err != nil {
			return 127
		}
		return 0
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// Background starts "self __run specPath" detached (its own session on Unix,
// its own hidden console and process group on Windows) with its output
// appended to logPath, and returns its pid. The supervisor outlives the
// caller; the caller does not wait for it.
func Background(self, specPath, logPath string, env []string) (int, error) {
	return startSupervisor(self, specPath, logPath, env, startDetached)
}

// startSupervisor starts "self __run specPath" with start, its output
// appended to logPath and no input, and returns its pid.
func startSupervisor(self, specPath, logPath string, env []string, start func(*exec.Cmd) (*exec.Cmd, error)) (int, error) {
	log, err := openLog(logPath)
	if err != nil {
		return 0, fmt.Errorf("open agent log: %w", err)
	}
	defer log.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return 0, err
	}
	defer devnull.Close()
	cmd := &exec.Cmd{
		Path:   self,
		Args:   []string{"spawn", "__run", specPath},
		Env:    env,
		Stdin:  devnull,
		Stdout: log,
		Stderr: log,
	}
	cmd, err = start(cmd)
	if err != nil {
		return 0, fmt.Errorf("start agent supervisor: %w", err)
	}
	pid := cmd.Process.Pid
	// Reap it if it ends while we still run; otherwise init adopts it.
	go cmd.Wait()
	return pid, nil
}

// Launch modes, as a type's launch= names them.
const (
	ModeBackground = "background"
	ModeTmux       = "tmux"
	ModeForeground = "foreground"
	ModeConsole    = "console"
	ModeWT         = "wt"
)

// ErrNoTmux is returned when a type asks for tmux and none is installed.
var ErrNoTmux = errors.New("this type launches in tmux, but tmux is not installed (install it, or use a type with launch=background)")

// Tmux opens a window named name in the tmux session for team (created,
// detached, when absent) running "self __run specPath", and returns the
// pane's pid: the supervisor, which tmux execs directly. env is the
// environment of the tmux client (TMUX_TMPDIR and TMUX select the server).
func Tmux(ctx context.Context, self, specPath, team, name string, env []string) (int, error) {
	if err := Supported(ModeTmux); err != nil {
		return 0, err
	}
	tmux, err := LookPath("tmux", env)
	if err != nil {
		return 0, ErrNoTmux
	}
	// A server this client starts daemonizes, and its orphan is adopted by
	// the nearest subreaper: the supervisor of the agent that ran spawn,
	// whose last sweep stops every adopted child but another run's. An
	// empty TEAMKIT_RUN (read as unset) says the server is no run's.
	env = append(slices.Clone(env), "TEAMKIT_RUN=")
	run := func(args ...string) (string, error) {
		c := exec.CommandContext(ctx, tmux, args...)
		c.Env = env
		out, err := c.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	session := TmuxSession(team)
	// A window command of several arguments is exec'd as it is (execvp;
	// tmux 1.9 and older refuse more than one), never given to a shell or
	// expanded as a format: any path reaches the supervisor intact.
	window := []string{self, "__run", specPath}
	out, err := "", error(nil)
	if _, err = run("has-session", "-t", "="+session); err != nil {
		out, err = run(append([]string{"new-session", "-d", "-P", "-F", "#{pane_pid}", "-s", session, "-n", name, "--"}, window...)...)
		if err != nil {
			// Another spawn of the same team may have created it meanwhile.
			if _, herr := run("has-session", "-t", "="+session); herr != nil {
				return 0, fmt.Errorf("tmux new-session: %s", out)
			}
		}
	}
	if err != nil || out == "" {
		out, err = run(append([]string{"new-window", "-d", "-P", "-F", "#{pane_pid}", "-t", "=" + session + ":", "-n", name, "--"}, window...)...)
		if err != nil {
			return 0, fmt.Errorf("tmux new-window: %s", out)
		}
	}
	pid, err := strconv.Atoi(out)
	if err != nil {
		return 0, fmt.Errorf("tmux did not report the window's pid (%q)", out)
	}
	return pid, nil
}

// TmuxSession is the tmux session for a team: tmux reads "." and ":" in a
// target as separators (and renames a session holding them), so they become
// "_".
func TmuxSession(team string) string {
	return strings.NewReplacer(".", "_", ":", "_").Replace(team)
}

// pipeCommand is the pipe-pane command that appends the pane's output to
// log: the path as one single-quoted shell word, with '#' and '%' doubled
// so that tmux's format and strftime expansion give them back as they are.
// tmux leaves a run of '#' before '[' (a style) as it is, doubled or not:
// an empty pair of quotes goes between them, which the shell drops.
func pipeCommand(log string) string {
	word := "'" + strings.ReplaceAll(log, "'", `'\''`) + "'"
	word = strings.ReplaceAll(word, "#[", "#''[")
	return "exec cat >> " + strings.NewReplacer("#", "##", "%", "%%").Replace(word)
}
