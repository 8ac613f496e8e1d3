//go:build linux

package teamkit_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/teamkit/teamkit/internal/modeltest"
	"github.com/teamkit/teamkit/internal/pgtest"
	"github.com/teamkit/teamkit/pkg/launch"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/proc"
)

// agentCLIs are the real agent CLIs the built-in types are tested with. The
// Makefile's agent-clis target (which .ci/run calls) installs these versions;
// keep the three in step.
var agentCLIs = []string{"claude", "codex", "gemini", "opencode"}

// agentCLIDir is where the agent CLIs are looked for: $TEAMKIT_AGENT_CLIS
// (a directory holding the four executables), else the bin directory of the
// cache the agent-clis make target installs into.
func agentCLIDir() string {
	if d := os.Getenv("TEAMKIT_AGENT_CLIS"); d != "" {
		return d
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "teamkit", "agent-clis", "node_modules", ".bin")
}

type modelKey struct{}

// releaseKey holds the channel that lets the Mail model's held turn go
// ("model release").
type releaseKey struct{}

func closeOnce(c chan struct{}) {
	select {
	case <-c:
	default:
		close(c)
	}
}

// agentWait bounds the waits of the agent scripts: a node CLI on a loaded
// 2-core machine took a minute to start, so they wait longer than waitLimit.
// Only a failing script waits this long.
const agentWait = 5 * time.Minute

// TestAgents drives every built-in AI type (but grok-build, whose CLI is not
// installable) end to end with its real CLI, against a scripted model server
// on 127.0.0.1: the scripts in testdata/agents. Without the CLIs the test
// skips with one line saying how to install them; in CI (CI=true) it fails.
func TestAgents(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/agents/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	testAgents(t, files, false)
}

// agentsPostgres are the agent scripts run a second time on PostgreSQL:
// those of the run records, which the backend keeps.
var agentsPostgres = []string{"runs_claude", "runs_codex", "budget_claude", "budget_codex"}

// TestAgentsPostgres runs agentsPostgres with TEAMKIT_DB a PostgreSQL URL.
func TestAgentsPostgres(t *testing.T) {
	pgtest.URL(t) // skips (or fails under CI=true) when there is no server
	t.Parallel()
	var files []string
	for _, s := range agentsPostgres {
		files = append(files, filepath.Join("testdata/agents", s+".txtar"))
	}
	testAgents(t, files, true)
}

func testAgents(t *testing.T, files []string, postgres bool) {
	dir := agentCLIDir()
	var missing []string
	for _, c := range agentCLIs {
		if st, err := os.Stat(filepath.Join(dir, c)); err != nil || st.Mode()&0o111 == 0 {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		msg := fmt.Sprintf("agent CLIs %s not found in %s: run `make agent-clis` (or set TEAMKIT_AGENT_CLIS) to test the built-in types with them", strings.Join(missing, ", "), dir)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	params := scriptParams(t, "", files, postgres)
	setup := params.Setup
	params.Setup = func(e *testscript.Env) error {
		if err := setup(e); err != nil {
			return err
		}
		return setupAgents(e, dir)
	}
	params.Cmds["model"] = modelCmd
	params.Cmds["derivetype"] = deriveType
	params.Cmds["runlog"] = runLog
	params.Cmds["runprocs"] = runProcs
	params.Cmds["runs"] = agentRuns
	testscript.Run(t, params)
}

// setupAgents points all four CLIs at a fresh scripted model server
// (modeltest.Configure), and makes the
// agent's own shell hostile: every profile and rc file resets PATH, as
// /etc/profile does for a login shell, so an agent finds the teamkit
// commands only the way spawn tells it to.
func setupAgents(e *testscript.Env, cliDir string) error {
	srv, err := modeltest.New(modeltest.Teamkit)
	if err != nil {
		return err
	}
	srv.Marker = modeltest.BriefingMarker
	// Deferred calls run last first: agents are gone before the server is,
	// since codex retries a vanished server forever.
	e.Defer(func() { srv.Close() })
	e.Defer(func() { killAgents(e.Getenv("TEAMKIT_DB")) })
	e.Values[modelKey{}] = srv
	// One gate a script, for the Mail model; a held request is let go before
	// the server closes.
	release := make(chan struct{})
	e.Values[releaseKey{}] = release
	e.Defer(func() { closeOnce(release) })

	home := e.Getenv("HOME")
	bin, err := exec.LookPath("spawn") // testscript's directory of our commands
	if err != nil {
		return err
	}
	e.Setenv("TEAMKIT_BIN", filepath.Dir(bin))
	e.Setenv("AGENT_CLIS", cliDir)
	e.Setenv("PATH", cliDir+string(filepath.ListSeparator)+e.Getenv("PATH"))
	env, err := srv.Configure(home, e.Getenv("XDG_CONFIG_HOME"))
	if err != nil {
		return err
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		e.Setenv(k, v)
	}
	resetPath := "PATH=/usr/bin:/bin; export PATH\n"
	for _, name := range []string{".profile", ".bash_profile", ".bashrc"} {
		if err := os.WriteFile(filepath.Join(home, name), []byte(resetPath), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// modelCmd inspects what the CLIs sent the script's model server:
//
//	model briefing TEAM NAME [TASKFILE]
//	    The first request of the agent's latest run (the first one offering a
//	    shell tool whose briefing names the run) carried the run's briefing
//	    byte for byte, as one text; and TASKFILE's content occurs in it
//	    exactly once. Prints that briefing.
//	model sent TEAM NAME
//	    Prints the text of the first request of the agent's latest run (as
//	    model briefing finds it) that holds the briefing's start, as the
//	    CLI sent it: for a CLI that rewrites its prompt.
//	model requests
//	    One line per request: seq, protocol, path, shell tool, tool results,
//	    and the turn answered.
//	model usage INPUT OUTPUT CACHE_READ CACHE_WRITE
//	    Every answer from now on reports this usage.
//	model fault 401 | 429 SECONDS [usage] | none
//	    Every model request from now on fails: bad credentials, or a rate
//	    (or usage) limit that resets in SECONDS; none ends that.
//	model continued TEAM NAME
//	    The first request of the agent's latest run that continues its
//	    session (modeltest.ContinueMarker naming the run) also carries the
//	    session's earlier briefing: the CLI resumed the session. Prints the
//	    briefing's first line and the count of earlier tool results, then
//	    the continuing prompt.
//	model tokens TEAM [turns]
//	    The tokens recorded for the team's runs (mailbox.DB.Runs) add up to
//	    the sum the model reported: over every request, or with turns over
//	    the agent's own turns only (opencode counts no title request).
func modelCmd(ts *testscript.TestScript, neg bool, args []string) {
	const usage = "usage: model briefing TEAM NAME [TASKFILE] | model sent TEAM NAME | model requests | model hold | model usage I O CR CW | model fault 401|429 SECONDS [usage]|none | model tokens TEAM [turns] | model continued TEAM NAME | model mail | model release | model flood | model busy | model nudged TEAM NAME"
	if neg || len(args) == 0 {
		ts.Fatalf(usage)
	}
	srv := ts.Value(modelKey{}).(*modeltest.Server)
	switch {
	case args[0] == "usage" && len(args) == 5:
		var n [4]int
		for i := range n {
			v, err := strconv.Atoi(args[i+1])
			ts.Check(err)
			n[i] = v
		}
		srv.SetUsage(modeltest.Usage{Input: n[0], Output: n[1], CacheRead: n[2], CacheWrite: n[3]})
	case args[0] == "fault" && len(args) == 2 && args[1] == "none":
		srv.SetFault(nil)
	case args[0] == "fault" && len(args) == 2 && args[1] == "401":
		srv.SetFault(&modeltest.Fault{Status: 401})
	case args[0] == "fault" && (len(args) == 3 || len(args) == 4 && args[3] == "usage") && args[1] == "429":
		secs, err := strconv.Atoi(args[2])
		ts.Check(err)
		srv.SetFault(&modeltest.Fault{Status: 429, ResetIn: time.Duration(secs) * time.Second, Usage: len(args) == 4})
	case args[0] == "tokens" && (len(args) == 2 || len(args) == 3 && args[2] == "turns"):
		var want modeltest.Usage
		for _, r := range srv.Requests() {
			if len(args) == 2 || r.Conversation.Shell != "" {
				want = want.Add(r.Usage)
			}
		}
		ctx := context.Background()
		db, err := mailbox.Open(ctx, ts.Getenv("TEAMKIT_DB"), mailbox.Options{})
		ts.Check(err)
		defer db.Close()
		runs, err := db.Runs(ctx, args[1], "", time.Time{})
		ts.Check(err)
		var got mailbox.Tokens
		for _, r := range runs {
			got = got.Add(r.Tokens)
		}
		fmt.Fprintf(ts.Stdout(), "recorded %+v over %d run(s); reported %+v\n", got, len(runs), want)
		if got != (mailbox.Tokens{Input: int64(want.Input), Output: int64(want.Output), CacheRead: int64(want.CacheRead), CacheWrite: int64(want.CacheWrite)}) || got.Total() == 0 {
			ts.Fatalf("model: the runs' recorded tokens %+v differ from what the model reported, %+v", got, want)
		}
	case args[0] == "hold" && len(args) == 1:
		srv.SetScript(modeltest.Hold)
	case args[0] == "mail" && len(args) == 1:
		srv.SetScript(modeltest.Mail(ts.Value(releaseKey{}).(chan struct{})))
	case args[0] == "release" && len(args) == 1:
		closeOnce(ts.Value(releaseKey{}).(chan struct{}))
	case args[0] == "flood" && len(args) == 1:
		srv.SetScript(modeltest.Flood)
	case args[0] == "busy" && len(args) == 1:
		srv.SetScript(modeltest.Busy)
	case args[0] == "nudged" && len(args) == 3:
		// The requests of the agent's latest run that asked the model again
		// with a Stop hook's reason, with the turn each got.
		a := latestRun(ts, args[1], args[2])
		var out strings.Builder
		n := 0
		for _, r := range srv.Requests() {
			if r.Conversation.Shell != "" && strings.Contains(r.Conversation.Briefing, a.Run) &&
				strings.Contains(r.Conversation.Last, "New teamkit mail") {
				n++
				fmt.Fprintln(&out, requestLine(r))
				fmt.Fprintf(&out, "asked: %s\n", strings.TrimSpace(r.Conversation.Last))
			}
		}
		fmt.Fprintf(ts.Stdout(), "nudged=%d\n%s", n, out.String())
	case args[0] == "continued" && len(args) == 3:
		a := latestRun(ts, args[1], args[2])
		deadline := time.Now().Add(agentWait)
		for {
			for _, r := range srv.Requests() {
				c := r.Conversation
				if c.Shell != "" && strings.Contains(c.Continued, a.Run) {
					if c.Briefing == "" || strings.Contains(c.Briefing, a.Run) {
						ts.Fatalf("model: request %d of run %s continues a session without its earlier briefing", r.Seq, a.Run)
					}
					first, _, _ := strings.Cut(c.Briefing, "\n")
					fmt.Fprintf(ts.Stdout(), "continued run=%s briefing=%q earlier_results=%d\n%s", a.Run, first, c.Since, c.Continued)
					return
				}
			}
			if time.Now().After(deadline) {
				ts.Fatalf("model: no request of run %s continued a session", a.Run)
			}
			time.Sleep(pollEvery)
		}
	case args[0] == "requests" && len(args) == 1:
		for _, r := range srv.Requests() {
			fmt.Fprintln(ts.Stdout(), requestLine(r))
		}
	case args[0] == "sent" && len(args) == 3:
		fmt.Fprint(ts.Stdout(), firstRequest(ts, srv, latestRun(ts, args[1], args[2]).Run).Conversation.Briefing)
	case args[0] == "briefing" && (len(args) == 3 || len(args) == 4):
		a := latestRun(ts, args[1], args[2])
		want := ts.ReadFile(strings.TrimSuffix(a.Log, ".log") + ".briefing.md")
		first := firstRequest(ts, srv, a.Run)
		got := first.Conversation.Briefing
		if got != want {
			ts.Fatalf("model: request %d of run %s did not carry the briefing whole:\n--- sent to the model\n%q\n--- the run's briefing\n%q", first.Seq, a.Run, got, want)
		}
		if len(args) == 4 {
			task := ts.ReadFile(args[3])
			if n := strings.Count(got, task); n != 1 {
				ts.Fatalf("model: the task in %s occurs %d times in the briefing the model got, want 1", args[3], n)
			}
		}
		fmt.Fprint(ts.Stdout(), got)
	default:
		ts.Fatalf(usage)
	}
}

// firstRequest waits for the first request of run that offers a shell
// tool and whose briefing names the run.
func firstRequest(ts *testscript.TestScript, srv *modeltest.Server, run string) *modeltest.Request {
	deadline := time.Now().Add(agentWait)
	for {
		for _, r := range srv.Requests() {
			if r.Conversation.Shell != "" && strings.Contains(r.Conversation.Briefing, run) {
				return &r
			}
		}
		if time.Now().After(deadline) {
			for _, r := range srv.Requests() {
				ts.Logf("%s", requestLine(r))
			}
			ts.Fatalf("model: no request of run %s reached the model", run)
		}
		time.Sleep(pollEvery)
	}
}

func requestLine(r modeltest.Request) string {
	turn := "-"
	if r.Turn != nil {
		turn = fmt.Sprintf("%q", r.Turn.Command+r.Turn.Text)
	}
	return fmt.Sprintf("%d %s %s %s status=%d shell=%s results=%d turn=%s", r.Seq, r.Protocol, r.Method, r.Path, r.Status,
		r.Conversation.Shell, len(r.Conversation.Results), turn)
}

// deriveType writes a user type DST into $TEAMKIT_TYPES from the built-in
// type SRC, so a variant (launch=tmux, a flag less) cannot drift from the
// type it varies:
//
//	derivetype SRC DST [KEY=VALUE | KEY-=TEXT]...
//
// KEY=VALUE replaces (or adds) a key's line; KEY-=TEXT removes TEXT from the
// key's value.
func deriveType(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: derivetype SRC DST [KEY=VALUE | KEY-=TEXT]...")
	}
	src := filepath.Join(ts.Getenv("TEAMKIT_ROOT"), "types", args[0])
	dst := filepath.Join(ts.Getenv("TEAMKIT_TYPES"), args[1])
	if ts.Getenv("TEAMKIT_TYPES") == "" {
		ts.Fatalf("derivetype: set TEAMKIT_TYPES first")
	}
	conf := strings.Split(ts.ReadFile(filepath.Join(src, "type.conf")), "\n")
	for _, edit := range args[2:] {
		k, v, ok := strings.Cut(edit, "=")
		if !ok {
			ts.Fatalf("derivetype: %q is not KEY=VALUE or KEY-=TEXT", edit)
		}
		remove := strings.HasSuffix(k, "-")
		k = strings.TrimSuffix(k, "-")
		found := false
		for i, line := range conf {
			val, isKey := strings.CutPrefix(line, k+"=")
			if !isKey {
				continue
			}
			found = true
			if remove {
				if !strings.Contains(val, v) {
					ts.Fatalf("derivetype: %s's %s has no %q", args[0], k, v)
				}
				conf[i] = k + "=" + strings.Replace(val, v, "", 1)
			} else {
				conf[i] = k + "=" + v
			}
		}
		if !found {
			if remove {
				ts.Fatalf("derivetype: %s has no key %s", args[0], k)
			}
			conf = append(conf, k+"="+v)
		}
	}
	ts.Check(os.MkdirAll(dst, 0o755))
	ts.Check(os.WriteFile(filepath.Join(dst, "type.conf"), []byte(strings.Join(conf, "\n")), 0o644))
	tmpl, err := os.ReadFile(filepath.Join(src, "template.md"))
	ts.Check(err)
	ts.Check(os.WriteFile(filepath.Join(dst, "template.md"), tmpl, 0o644))
}

// latestRun is the agent's record, of its latest launch.
func latestRun(ts *testscript.TestScript, team, name string) mailbox.Agent {
	ctx := context.Background()
	db, err := mailbox.Open(ctx, ts.Getenv("TEAMKIT_DB"), mailbox.Options{})
	ts.Check(err)
	defer db.Close()
	a, err := db.Agent(ctx, team, name)
	ts.Check(err)
	return a
}

// runLog prints the log of the agent's latest run: "runlog TEAM NAME".
func runLog(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: runlog TEAM NAME")
	}
	fmt.Fprint(ts.Stdout(), ts.ReadFile(latestRun(ts, args[0], args[1]).Log))
}

// killAgents kills whatever still runs with this script's mailbox in its
// environment (an agent left behind by a failed script), found through
// /proc, so a failure never leaves a CLI running.
func killAgents(db string) {
	dirs, _ := os.ReadDir("/proc")
	mark := []byte("TEAMKIT_DB=" + db + "\x00")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
		if err == nil && bytes.Contains(env, mark) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// runProcs prints the live processes of the agent's latest run, one
// "PID COMMAND" line each: "runprocs [-wait REGEXP] TEAM NAME", with -wait
// once the list matches REGEXP.
func runProcs(ts *testscript.TestScript, neg bool, args []string) {
	var want *regexp.Regexp
	if len(args) == 4 && args[0] == "-wait" {
		want = regexp.MustCompile("(?s)" + args[1])
		args = args[2:]
	}
	if neg || len(args) != 2 {
		ts.Fatalf("usage: runprocs [-wait REGEXP] TEAM NAME")
	}
	a := latestRun(ts, args[0], args[1])
	for deadline := time.Now().Add(waitLimit); ; time.Sleep(pollEvery) {
		var b strings.Builder
		for _, pid := range (proc.Group{Marker: launch.Marker(a.Run)}).Members() {
			comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
			fmt.Fprintf(&b, "%d %s\n", pid, strings.TrimSpace(string(comm)))
		}
		if want == nil || want.MatchString(b.String()) {
			fmt.Fprint(ts.Stdout(), b.String())
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("runprocs: the run's processes never matched %q:\n%s", want, b.String())
		}
	}
}

// agentRuns prints the runs of an agent, one id a line, from the files they
// left in its run directory: "runs TEAM NAME".
func agentRuns(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: runs TEAM NAME")
	}
	dir := filepath.Dir(latestRun(ts, args[0], args[1]).Log)
	for _, run := range mailbox.Runs(filepath.Dir(filepath.Dir(dir)), args[0], args[1]) {
		fmt.Fprintln(ts.Stdout(), run)
	}
}
