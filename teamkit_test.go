//go:build linux

package teamkit_test

import (
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/teamkit/teamkit/internal/cmd/ask"
	"github.com/teamkit/teamkit/internal/cmd/inbox"
	"github.com/teamkit/teamkit/internal/cmd/ready"
	"github.com/teamkit/teamkit/internal/cmd/resume"
	"github.com/teamkit/teamkit/internal/cmd/spawn"
	"github.com/teamkit/teamkit/internal/cmd/stale"
	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/internal/githubtest"
	"github.com/teamkit/teamkit/internal/pgtest"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

// The end-to-end scripts in testdata/script run the real commands, as a
// user runs them: testscript installs this test binary under each command's
// name on the scripts' PATH, so agents that spawn starts can call them too.
var commands = map[string]command.App{
	"inbox":  inbox.App,
	"stale":  stale.App,
	"ready":  ready.App,
	"spawn":  spawn.New(spawn.Hooks{Step: supervisorFault(os.Getenv("TEAMKIT_TEST_FAULT"))}),
	"ask":    ask.App,
	"resume": resume.New(resume.Hooks{Crash: crashAt(os.Getenv("TEAMKIT_TEST_CRASH"))}),
}

// crashAt kills the resume process at the crash point TEAMKIT_TEST_CRASH
// names (after-intent, after-decide, after-launch, after-spawn):
// resume_crash.txtar and TestAnswerFaults prove that the next pass recovers
// from a crash at each point. The variable is read
// here, in the test binary only; the shipped resume has no such hook.
func crashAt(want string) func(string) {
	if want == "" {
		return nil
	}
	return func(point string) {
		if point == want {
			fmt.Fprintf(os.Stderr, "resume: TEAMKIT_TEST_CRASH=%s: killing myself\n", point)
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way
		}
	}
}

// skewed is env with its clock off by TEAMKIT_TEST_CLOCK_SKEW (a duration,
// say -60s): a script runs a host's commands with that host's clock wrong,
// as a real host's may be (proc_clock_skew.txtar). The variable is read here,
// in the test binary only.
func skewed(env *command.Env) *command.Env {
	if d, err := time.ParseDuration(os.Getenv("TEAMKIT_TEST_CLOCK_SKEW")); err == nil {
		env.Now = func() time.Time { return time.Now().Add(d) }
	}
	return env
}

func TestMain(m *testing.M) {
	mains := map[string]func(){}
	for name, app := range commands {
		mains[name] = func() { os.Exit(command.MainEnv(app, skewed(command.OS()))) }
	}
	mains["pidinit"] = func() { os.Exit(pidInit()) }
	os.Setenv(suiteVar, suiteMark)
	testscript.Main(leftoverCheck{pgtest.Wrap(m)}, mains)
}

func TestScripts(t *testing.T) {
	requireInCI(t)
	t.Parallel()
	testscript.Run(t, scriptParams(t, "testdata/script", nil, false))
}

// bashCompletion is the bash-completion package's loader (Debian's path),
// which completion_bash.txtar sources as an interactive bash does.
const bashCompletion = "/usr/share/bash-completion/bash_completion"

// requireInCI fails the run when CI=true and a part that some scripts skip
// without is missing: .ci/run installs git, tmux, zsh, fish, bash-completion and procps, and CI must run
// those scripts rather than skip them. A user's machine skips them, each
// with its one-line reason.
func requireInCI(t *testing.T) {
	if os.Getenv("CI") != "true" {
		return
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("CI=true but git is missing: the spawn_worktree scripts would skip (.ci/run installs it)")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("CI=true but tmux is missing: the tmux scripts would skip (.ci/run installs it)")
	}
	for _, sh := range []string{"zsh", "fish"} {
		if _, err := exec.LookPath(sh); err != nil {
			t.Fatalf("CI=true but %s is missing: completion_%s would skip (.ci/run installs it)", sh, sh)
		}
	}
	if _, err := os.Stat(bashCompletion); err != nil {
		t.Fatal("CI=true but bash-completion is missing: completion_bash would skip (.ci/run installs it)")
	}
	if !canPidNS() {
		t.Fatal("CI=true but pid namespaces, nsenter or pkill are missing: proc_pid_reuse would skip (.ci/run installs procps)")
	}
}

// postgresScripts run a second time with TEAMKIT_DB a PostgreSQL URL (a
// fresh database each): the walk-throughs and the scripts that exercise the
// store through every command. The rest test SQLite files (errors.txtar:
// paths, permissions) or launchers, which the backend does not change.
var postgresScripts = []string{
	"readme_walkthrough", "inbox_roundtrip", "inbox_bytes", "ready", "ready_mark_stray", "spawn_handshake",
	"spawn_probe", "ask_local", "resume_question", "resume_concurrent", "resume_pause", "resume_crash",
	"fleet", "inbox_fleet", "slack_question", "slack_approval", "slack_race", "slack_outage",
	"slack_as_it_stands", "slack_db_outage",
	"inbox_copy", "inbox_copy_pruned_ids", "inbox_copy_twice", "inbox_copy_no_source", "inbox_copy_self_postgres", "proc_hosts", "proc_stop", "proc_supervisor_crash", "resume_two_hosts", "inbox_slow_reader", "inbox_interrupt", "resume_stalled_reader", "resume_host", "proc_legacy_record",
	"resume_delivery",
	"proc_clock_skew", "restart_waits", "inbox_wake", "exit_spool", "spawn_queue", "spawn_burst", "spawn_worktree", "run_records",
	"activity",
	"resume_wake",
	"resume_parks", "resume_session",
	"completion_mailbox",
	"budget_local", "budget_github", "budget_slack", "budget_queued", "run_supervisor_killed",
	"spawn_bytes_postgres", "spawn_queue_outage", "audit_secrets", "spawn_relaunched",
}

func TestScriptsPostgres(t *testing.T) {
	pgtest.URL(t) // skips (or fails under CI=true) when there is no server
	t.Parallel()
	var files []string
	for _, s := range postgresScripts {
		files = append(files, filepath.Join("testdata/script", s+".txtar"))
	}
	testscript.Run(t, scriptParams(t, "", files, true))
}

// scriptParams runs the scripts in dir (or files, in their order) with a
// fresh mailbox each: a SQLite file in $WORK, or with postgres a
// PostgreSQL database.
func scriptParams(t *testing.T, dir string, files []string, postgres bool) testscript.Params {
	return testscript.Params{
		Dir:                 dir,
		Files:               files,
		RequireExplicitExec: false,
		Setup: func(e *testscript.Env) error {
			work := e.Getenv("WORK")
			e.Setenv("HOME", filepath.Join(work, "home"))
			e.Setenv(suiteVar, suiteMark)
			e.Setenv("XDG_STATE_HOME", filepath.Join(work, "state"))
			e.Setenv("XDG_CONFIG_HOME", filepath.Join(work, "config"))
			e.Setenv("TEAMKIT_DB", filepath.Join(work, "team.db"))
			if postgres {
				u, drop, err := pgtest.NewDatabase()
				if err != nil {
					return err
				}
				e.Defer(drop)
				e.Setenv("TEAMKIT_DB", u)
			}
			// Where spawn keeps this mailbox's run files, for the scripts.
			e.Setenv("RUNS", mailbox.RunsDir(filepath.Join(work, "state", "teamkit"), e.Getenv("TEAMKIT_DB")))
			e.Setenv("USER", "tester")
			root, err := os.Getwd() // the repository root, where this file is
			if err != nil {
				return err
			}
			e.Setenv("TEAMKIT_ROOT", root)
			// A fake GitHub API per script, driven by ghfake (see
			// escalate_test.go), and no way to reach a real gh login.
			fake := githubtest.New()
			srv := httptest.NewServer(fake)
			e.Defer(srv.Close)
			e.Values[fakeKey{}] = fake
			e.Setenv("GITHUB_API_URL", srv.URL)
			e.Setenv("GH_TOKEN", githubtest.DefaultToken)
			e.Setenv("GH_PATH", filepath.Join(work, "no-gh"))
			e.Setenv("GH_CONFIG_DIR", filepath.Join(work, "gh-config"))
			setupSlack(e)
			setupOutage(e)
			// The scripts that launch in tmux run their own server in
			// $WORK/tmux; it goes even when the script fails before its
			// own kill-server.
			e.Defer(func() {
				c := exec.Command("tmux", "kill-server")
				c.Env = append(os.Environ(), "TMUX_TMPDIR="+filepath.Join(work, "tmux"))
				c.Run()
			})
			e.Values[varsKey{}] = append([]string(nil), e.Vars...)
			e.Values[pidNSKey{}] = &pidNS{}
			e.Values[clusterKey{}] = &ownCluster{}
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "pidns":
				return canPidNS(), nil
			case "bashcompletion":
				_, err := os.Stat(bashCompletion)
				return err == nil, nil
			case "postgres": // the mailbox is a PostgreSQL database
				return files != nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"expect":       expectExit,
			"ghfake":       ghFake,
			"waitfor":      waitFor,
			"waitagent":    waitAgent,
			"waitclaim":    waitClaim,
			"parallel":     parallel,
			"fenced":       fenced,
			"pty":          ptyCmd,
			"slackfake":    slackFake,
			"crash":        crash,
			"legacyrecord": legacyRecord,
			"waitgone":     waitGone,
			"freeze":       freeze,
			"pgserver":     pgServer,
			"pidns":        pidns,
			"stalled":      stalled,
			"fixture":      fixture,
			"dbexec":       dbExec,
			"corrupt":      corruptTable,
			"dbdown":       dbOutage("dbdown"),
			"dbup":         dbOutage("dbup"),
			"faulttrigger": faultTrigger,
			"nosecret":     noSecret,
		},
	}
}

// expectExit runs "expect N cmd args…": cmd must exit with status N, and
// its stdout and stderr are kept for the stdout/stderr checks that follow.
func expectExit(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: expect <status> <command> [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("expect: bad status %q", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("expect: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// fixture copies the shared test agent type testdata/types/NAME into the
// script's $WORK/types, where the scripts point TEAMKIT_TYPES: one copy of a
// fake agent that many scripts use, instead of one pasted into each.
//
//	fixture NAME
func fixture(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: fixture NAME")
	}
	src := filepath.Join(ts.Getenv("TEAMKIT_ROOT"), "testdata", "types", args[0])
	entries, err := os.ReadDir(src)
	if err != nil {
		ts.Fatalf("fixture: %v", err)
	}
	dst := ts.MkAbs(filepath.Join("types", args[0]))
	ts.Check(os.MkdirAll(dst, 0o755))
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		ts.Check(err)
		ts.Check(os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644))
	}
}
