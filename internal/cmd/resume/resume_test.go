package resume

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofrs/flock"

	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/internal/command/commandtest"
	"github.com/teamkit/teamkit/pkg/escalate"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

func invoke(t *testing.T, vars map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	h := &commandtest.Harness{T: t, App: App, Name: "resume", Vars: vars}
	r := h.Run(args...)
	return r.Code, r.Stdout, dropNotes(r.Stderr)
}

// dropNotes removes the notes a command on a fresh, empty mailbox prints
// ("created a new mailbox", "team has no agents"): these tests are about
// what a pass says.
func dropNotes(s string) string {
	var keep []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if !strings.HasPrefix(l, "resume: note: ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}

func TestLockHeldAndPaused(t *testing.T) {
	dir := t.TempDir()
	vars := map[string]string{"TEAMKIT_DB": filepath.Join(dir, "team.db"), "XDG_STATE_HOME": dir}

	// Another resume of the team holds the lock: this pass says so, exit 0.
	held := flock.New(filepath.Join(dir, "team.db-locks", "t", escalate.LockKey+".lock"))
	os.MkdirAll(filepath.Dir(held.Path()), 0o700)
	if ok, err := held.TryLock(); !ok || err != nil {
		t.Fatal(ok, err)
	}
	code, out, errs := invoke(t, vars, "t")
	if code != 0 || out != "" || errs != "resume: another resume of team t is running; this pass does nothing\n" {
		t.Errorf("lock held: %d %q %q", code, out, errs)
	}
	held.Unlock()

	if code, out, _ := invoke(t, vars, "pause", "t"); code != 0 || out != "team=t paused=yes\n" {
		t.Errorf("pause: %d %q", code, out)
	}
	code, out, errs = invoke(t, vars, "t", "--json")
	if code != 0 || out != "" || !strings.Contains(errs, "team t is paused; nothing done") {
		t.Errorf("paused: %d %q %q", code, out, errs)
	}
	if code, out, _ := invoke(t, vars, "unpause", "t"); code != 0 || out != "team=t paused=no\n" {
		t.Errorf("unpause: %d %q", code, out)
	}
	if code, out, errs := invoke(t, vars, "t"); code != 0 || out != "" || errs != "" {
		t.Errorf("empty pass: %d %q %q", code, out, errs)
	}
	// Usage errors.
	for _, args := range [][]string{{}, {"t", "u"}, {"t", "--interval", "-1s"}, {"t", "--deciders", "a b"}, {"bad/team"}} {
		if code, _, _ := invoke(t, vars, args...); code != command.ExitUsage {
			t.Errorf("%q: exit %d, want 64", args, code)
		}
	}
}

func TestReportLine(t *testing.T) {
	var out bytes.Buffer
	code := 3
	r := escalate.Resumed{AskID: 4, Team: "t", Agent: "w1", Status: "exited", AfterSeconds: 1.25, Run: "R",
		Decision: "answered", DecidedBy: "carol", ExitCode: &code, Log: "/tmp/x y.log"}
	if err := reporter(false, &out)(r); err != nil {
		t.Fatal(err)
	}
	if want := "resumed ask=4 agent=w1 status=exited after=1.2s run=R decision=answered by=carol code=3 log=\"/tmp/x y.log\"\n"; out.String() != want {
		t.Errorf("line %q\nwant %q", out.String(), want)
	}
	out.Reset()
	r.Status, r.ExitCode = "ready", nil
	reporter(true, &out)(r)
	// A run still going has no exit code: null, as spawn list --json says
	// it, not a missing key (the README lists exit_code among the keys).
	if !strings.HasPrefix(out.String(), `{"ask_id":4,"team":"t","agent":"w1",`) || !strings.Contains(out.String(), `"status":"ready","after_seconds":1.25,"run":"R","exit_code":null,`) {
		t.Errorf("json %s", out.String())
	}
}

// A pass over a GitHub ask without a token: one error line naming GitHub
// once, its hint, exit 1; the ask stays awaiting.
func TestPassWithoutToken(t *testing.T) {
	h := commandtest.New(t, "resume", App)
	ghConfig := t.TempDir() // no gh login
	h.Vars["GH_CONFIG_DIR"], h.Vars["GH_PATH"] = ghConfig, filepath.Join(ghConfig, "no-gh")
	h.Vars["GITHUB_API_URL"] = "http://127.0.0.1:1"
	ctx := context.Background()
	db := h.Store()
	if err := db.RecordLaunch(ctx, mailbox.Agent{Team: "t", Name: "w1", Type: "probe", Run: "r1", State: mailbox.StateExited}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.CreateAsk(ctx, mailbox.Ask{Team: "t", Agent: "w1", Run: "r1", Issue: "octo/repo#7", Kind: mailbox.KindQuestion, Question: "Which?"}); err != nil {
		t.Fatal(err)
	}
	r := h.Run("t")
	errs := dropNotes(r.Stderr)
	if r.Code != 1 || !strings.HasPrefix(errs, "resume: error: github: no token found for 127.0.0.1") ||
		!strings.Contains(errs, "; the asks on github stay awaiting\nresume: hint: log in with 'gh auth login', or set GH_TOKEN\n") ||
		strings.Count(errs, "\n") != 2 {
		t.Errorf("exit %d, stderr %q", r.Code, errs)
	}
	if a, err := db.Ask(ctx, 1); err != nil || a.State != mailbox.AskAwaiting {
		t.Errorf("ask %+v, %v", a, err)
	}
}

// TestUsageErrorsSayEnough: the usage line names every flag resume takes
// (it is made from them), and a refused --interval or --parallel comes
// with a hint, as other flags' refusals do.
func TestUsageErrorsSayEnough(t *testing.T) {
	vars := map[string]string{"TEAMKIT_DB": filepath.Join(t.TempDir(), "t.db"), "HOME": t.TempDir()}
	code, _, errs := invoke(t, vars, "demo", "extra")
	if code != command.ExitUsage {
		t.Fatalf("resume demo extra: exit %d, want 64", code)
	}
	for _, f := range []string{"--watch", "--interval D", "--parallel N", "--deciders", "--slack-deciders", "--json"} {
		if !strings.Contains(errs, f) {
			t.Errorf("resume demo extra: the usage line leaves out %s:\n%s", f, errs)
		}
	}
	for _, args := range [][]string{
		{"demo", "--interval", "5ms"}, {"demo", "--interval", "0"},
		{"demo", "--parallel", "0"}, {"demo", "--parallel", "65"},
	} {
		code, _, errs := invoke(t, vars, args...)
		if code != command.ExitUsage || !strings.Contains(errs, "resume: hint: ") {
			t.Errorf("resume %q: exit %d, want 64 with a hint line; stderr:\n%s", args, code, errs)
		}
	}
}

// TestMissingDecidersFileHint: a deciders @FILE that does not exist fails
// the pass (closed: nothing is approved without the list) with a hint
// naming the file expected and how to make it; every pass of --watch
// would otherwise repeat a bare "no such file" while backing off.
func TestMissingDecidersFileHint(t *testing.T) {
	dir := t.TempDir()
	vars := map[string]string{"TEAMKIT_DB": filepath.Join(dir, "t.db"), "HOME": dir}
	missing := filepath.Join(dir, "deciders.txt")
	for _, flag := range []string{"--deciders", "--slack-deciders"} {
		code, _, errs := invoke(t, vars, "t", flag, "@"+missing)
		if code != command.ExitFailure {
			t.Errorf("%s @missing: exit %d, want 1 (fail closed)", flag, code)
		}
		if !strings.Contains(errs, "resume: hint: ") || !strings.Contains(errs[strings.Index(errs+"resume: hint: ", "resume: hint: "):], missing) {
			t.Errorf("%s @missing: no hint naming %s:\n%s", flag, missing, errs)
		}
	}
}
