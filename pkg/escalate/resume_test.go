package escalate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/teamkit/teamkit/internal/githubtest"
	"github.com/teamkit/teamkit/internal/pgtest"
	"github.com/teamkit/teamkit/pkg/github"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

// TestMain keeps go-gh away from the developer's gh setup.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "escalate-gh-config")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("GH_CONFIG_DIR", dir)
	os.Setenv("GH_PATH", filepath.Join(dir, "no-gh"))
	for _, v := range []string{"GH_TOKEN", "GITHUB_TOKEN", "GH_HOST", "GITHUB_API_URL", "GH_DEBUG"} {
		os.Unsetenv(v)
	}
	code := pgtest.Run(m) // stops the PostgreSQL cluster the kit may start
	os.RemoveAll(dir)
	os.Exit(code)
}

const issue = "octo/repo#7"

// fixture is a mailbox, a fake GitHub and a spawner that records its
// launches the way spawn does (so crash recovery can find them).
type fixture struct {
	t      testing.TB
	dir    string
	path   string
	db     *mailbox.DB
	fake   *githubtest.Server
	gh     *github.Client
	stderr bytes.Buffer

	mu       sync.Mutex
	spawns   []SpawnRequest
	spawnErr error
	resumed  []Resumed
	runs     int
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	dir := t.TempDir()
	return newFixtureAt(t, dir, filepath.Join(dir, "team.db"))
}

// newFixtureAt is a fixture whose mailbox is at path (a file or a
// PostgreSQL URL).
func newFixtureAt(t testing.TB, dir, path string) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: dir, path: path}
	f.db = f.open()
	f.fake = githubtest.NewServer()
	t.Cleanup(f.fake.Close)
	if err := f.fake.AddIssue("octo", "repo", 7, "alice"); err != nil {
		t.Fatal(err)
	}
	f.gh = f.client()
	return f
}

func (f *fixture) open() *mailbox.DB {
	f.t.Helper()
	db, err := mailbox.Open(context.Background(), f.path, mailbox.Options{})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { db.Close() })
	return db
}

// client is a GitHub client that does not retry: a failure reaches the pass
// at once (the github package tests the retries themselves).
func (f *fixture) client() *github.Client {
	f.t.Helper()
	c, err := github.New(github.Options{BaseURL: f.fake.URL, Token: githubtest.DefaultToken,
		Getenv: func(string) string { return "" }, MaxRetries: -1})
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

// agent records a launch of agent name, as spawn would have.
func (f *fixture) agent(name, iss string) {
	f.t.Helper()
	code := 0
	err := f.db.RecordLaunch(context.Background(), mailbox.Agent{Team: "t", Name: name, Type: "asker", Run: "first-" + name,
		State: mailbox.StateExited, Task: "Original task of " + name + ".", Issue: iss, Workdir: f.dir, ExitCode: &code})
	if err != nil {
		f.t.Fatal(err)
	}
}

// ask records and posts (with an issue) a question of agent name.
func (f *fixture) ask(name, iss, kind, question string) mailbox.Ask {
	f.t.Helper()
	ctx := context.Background()
	f.agent(name, iss)
	a, created, err := Record(ctx, f.db, mailbox.Ask{Team: "t", Agent: name, Run: "first-" + name, Issue: iss, Kind: kind, Question: question})
	if err != nil || !created {
		f.t.Fatalf("Record: %v %v", created, err)
	}
	if iss != "" {
		if a, err = Post(ctx, f.db, f.gh, a, true); err != nil {
			f.t.Fatal(err)
		}
	}
	return a
}

func (f *fixture) comment(login, assoc, body string) int64 {
	f.t.Helper()
	id, err := f.fake.AddComment("octo", "repo", 7, login, assoc, body)
	if err != nil {
		f.t.Fatal(err)
	}
	return id
}

func (f *fixture) spawner(db *mailbox.DB) Spawner {
	return func(ctx context.Context, req SpawnRequest) (SpawnResult, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.spawnErr != nil {
			return SpawnResult{}, f.spawnErr
		}
		f.spawns = append(f.spawns, req)
		err := db.RecordLaunch(ctx, mailbox.Agent{Team: req.Team, Name: req.Name, Type: req.Type, Run: req.Run,
			State: mailbox.StateStarting, Task: req.Task, Issue: req.Issue, Workdir: req.Workdir, ResumeOf: req.ResumeOf})
		if err == nil {
			// What the run's supervisor does before it starts the agent.
			err = db.StartRun(ctx, req.Team, req.Name, req.Run, mailbox.Process{PID: 1}, req.AskID)
		}
		return SpawnResult{Status: "ready", Run: req.Run, After: time.Second}, err
	}
}

// newRun numbers the launches: respawn-1, respawn-2, …
func (f *fixture) newRun() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.runs++
	return fmt.Sprintf("respawn-%d", f.runs)
}

func (f *fixture) resumer(db *mailbox.DB, deciders string) *Resumer {
	return &Resumer{
		DB: db, Team: "t",
		Channels: []Channel{LocalChannel{}, &GitHubChannel{
			Client:   func() (GitHub, error) { return f.client(), nil },
			Deciders: func() (Deciders, error) { return ParseDeciders(deciders, os.ReadFile) },
		}},
		Spawn:  f.spawner(db),
		NewRun: f.newRun,
		Report: func(r Resumed) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.resumed = append(f.resumed, r)
			return nil
		},
		Stderr: &syncWriter{w: &f.stderr, mu: &f.mu},
	}
}

type syncWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (f *fixture) spawnCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.spawns)
}

func (f *fixture) state(id int64) mailbox.Ask {
	f.t.Helper()
	a, err := f.db.Ask(context.Background(), id)
	if err != nil {
		f.t.Fatal(err)
	}
	return a
}

func (f *fixture) intents() int {
	f.t.Helper()
	in, err := f.db.ResumeIntents(context.Background(), "t")
	if err != nil {
		f.t.Fatal(err)
	}
	return len(in)
}

func (f *fixture) lastRequestsSince(n int) []githubtest.Request { return f.fake.Requests()[n:] }

func TestPassResumesOnceWithConditionalReads(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	a := f.ask("w1", issue, mailbox.KindQuestion, "Which colour?")
	r := f.resumer(f.db, "")

	if err := r.Pass(ctx); err != nil || f.spawnCount() != 0 {
		t.Fatalf("no reply: %v, %d spawns", err, f.spawnCount())
	}
	f.comment("mallory", "NONE", "Red!")
	if err := r.Pass(ctx); err != nil || f.spawnCount() != 0 {
		t.Fatalf("stranger: %v, %d spawns", err, f.spawnCount())
	}
	// Unchanged issue: one request, a 304 that costs no rate limit.
	n, before := len(f.fake.Requests()), f.fake.RateRemaining()
	if err := r.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	reqs := f.lastRequestsSince(n)
	if len(reqs) != 1 || reqs[0].Status != http.StatusNotModified || !strings.Contains(reqs[0].Query, "since=") {
		t.Fatalf("unchanged issue: %+v", reqs)
	}
	if f.fake.RateRemaining() != before {
		t.Error("the 304 pass cost rate limit")
	}
	// The ETag is in the mailbox: a fresh Resumer (a cron pass) gets the 304 too.
	n = len(f.fake.Requests())
	if err := f.resumer(f.open(), "").Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if reqs := f.lastRequestsSince(n); len(reqs) != 1 || reqs[0].Status != http.StatusNotModified {
		t.Fatalf("fresh pass: %+v", reqs)
	}

	f.comment("carol", "COLLABORATOR", "Blue.")
	if err := r.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if f.spawnCount() != 1 {
		t.Fatalf("%d spawns, want 1", f.spawnCount())
	}
	req := f.spawns[0]
	if req.Type != "asker" || req.Name != "w1" || req.Team != "t" || req.Issue != issue || req.Workdir != f.dir ||
		!strings.HasPrefix(req.Task, "Original task of w1.\n\n### Your question and its answer (teamkit ask 1)\n") ||
		!strings.HasPrefix(req.ResumeOf, "ask 1 resume ") {
		t.Errorf("spawn request %+v", req)
	}
	fencedOnce(t, req.Task, "Blue.")
	got := f.state(a.ID)
	if got.State != mailbox.AskAnswered || got.Answer != "Blue." || got.DecidedBy != "carol" || got.ResumedRun != "respawn-1" || f.intents() != 0 {
		t.Errorf("ask after resume: %+v, %d intents", got, f.intents())
	}
	if len(f.resumed) != 1 || f.resumed[0].AskID != a.ID || f.resumed[0].Status != "ready" || f.resumed[0].Run != "respawn-1" || f.resumed[0].DecidedBy != "carol" {
		t.Errorf("reported %+v", f.resumed)
	}
	// A second pass does nothing, and reads nothing.
	n = len(f.fake.Requests())
	if err := r.Pass(ctx); err != nil || f.spawnCount() != 1 || len(f.lastRequestsSince(n)) != 0 {
		t.Errorf("second pass: %v, %d spawns, %d requests", err, f.spawnCount(), len(f.lastRequestsSince(n)))
	}
	if f.stderr.Len() != 0 {
		t.Errorf("stderr: %s", f.stderr.String())
	}
}

func TestDecidersChangeInvalidatesETag(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	a := f.ask("w1", issue, mailbox.KindApproval, "May I deploy?")
	f.comment("erin", "NONE", "/approve go")
	// Erin is not a decider yet: nothing, and the ETag is kept.
	if err := f.resumer(f.db, "frank").Pass(ctx); err != nil || f.spawnCount() != 0 {
		t.Fatalf("%v %d", err, f.spawnCount())
	}
	// With Erin on the list the same, unchanged comments are read again.
	if err := f.resumer(f.db, "frank,erin").Pass(ctx); err != nil || f.spawnCount() != 1 {
		t.Fatalf("%v %d", err, f.spawnCount())
	}
	if got := f.state(a.ID); got.Decision != mailbox.DecisionApproved || got.Answer != "go" || got.DecidedBy != "erin" {
		t.Errorf("ask %+v", got)
	}
}

func TestApprovalWithoutDecidersFailsClosed(t *testing.T) {
	f := newFixture(t)
	a := f.ask("w1", issue, mailbox.KindApproval, "May I deploy?")
	f.comment("dave", "OWNER", "/approve")
	n := len(f.fake.Requests())
	if err := f.resumer(f.db, "").Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if f.spawnCount() != 0 || f.state(a.ID).State != mailbox.AskAwaiting || len(f.lastRequestsSince(n)) != 0 {
		t.Errorf("decided without a list")
	}
	if !strings.Contains(f.stderr.String(), "warning: ask 1 (t/w1, octo/repo#7) asks for approval, but no deciders are configured") {
		t.Errorf("stderr %q", f.stderr.String())
	}
	// An unreadable list: one failure line, nothing decided.
	f.stderr.Reset()
	err := f.resumer(f.db, "@"+filepath.Join(f.dir, "missing")).Pass(context.Background())
	var failed *FailedError
	if !errors.As(err, &failed) || failed.Count != 1 || f.spawnCount() != 0 {
		t.Errorf("unreadable list: %v", err)
	}
	if !strings.Contains(f.stderr.String(), "error: deciders: read deciders file") {
		t.Errorf("stderr %q", f.stderr.String())
	}
}

func TestGitHubFailuresLeaveAsksAwaiting(t *testing.T) {
	cases := []struct {
		name string
		fail githubtest.Failure
		want string
	}{
		{"5xx", githubtest.Failure{Count: -1, Status: 502}, "github: 502 Bad Gateway"},
		{"network", githubtest.Failure{Count: -1, Drop: true}, "github: connection dropped"},
		{"401", githubtest.Failure{Count: -1, Status: 401, Message: "Bad credentials"}, "github: 401 Unauthorized"},
		{"403", githubtest.Failure{Count: -1, Status: 403, Message: "Resource not accessible"}, "github: 403 Forbidden"},
		{"404", githubtest.Failure{Count: -1, Status: 404}, "github: 404 Not Found"},
		{"422", githubtest.Failure{Count: -1, Status: 422}, "github: 422 Unprocessable Entity"},
		{"rate limit", githubtest.Failure{Count: -1, Status: 403, Headers: map[string]string{
			"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)}}, "rate limit resets at"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			ctx := context.Background()
			a := f.ask("w1", issue, mailbox.KindQuestion, "Which colour?")
			b := f.ask("w2", issue, mailbox.KindQuestion, "Which font?")
			f.comment("carol", "MEMBER", "Blue.")
			if err := f.fake.Fail(c.fail); err != nil {
				t.Fatal(err)
			}
			err := f.resumer(f.db, "").Pass(ctx)
			var failed *FailedError
			if !errors.As(err, &failed) || failed.Count != 2 {
				t.Fatalf("err = %v, want 2 failures", err)
			}
			lines := strings.Split(strings.TrimSpace(f.stderr.String()), "\n")
			// A refused token is a configuration error: its hint follows, once.
			want := 2
			if c.name == "401" {
				want = 3
				if !strings.HasPrefix(lines[len(lines)-1], "resume: hint: GitHub refused the token") {
					t.Errorf("no hint:\n%s", f.stderr.String())
				}
			}
			if len(lines) != want || !strings.HasPrefix(lines[0], "resume: error: ask 1 (t/w1, octo/repo#7): ") || !strings.Contains(lines[0], c.want) {
				t.Errorf("stderr:\n%s", f.stderr.String())
			}
			for _, id := range []int64{a.ID, b.ID} {
				if got := f.state(id); got.State != mailbox.AskAwaiting {
					t.Errorf("ask %d is %s", id, got.State)
				}
			}
			if f.spawnCount() != 0 || f.intents() != 0 {
				t.Errorf("%d spawns, %d intents", f.spawnCount(), f.intents())
			}
			// Recovery: the next clean pass resumes both.
			f.fake.ClearFailures()
			f.stderr.Reset()
			if err := f.resumer(f.db, "").Pass(ctx); err != nil || f.spawnCount() != 2 {
				t.Fatalf("recovery: %v, %d spawns; %s", err, f.spawnCount(), f.stderr.String())
			}
		})
	}
}

func TestNoTokenIsOneLine(t *testing.T) {
	f := newFixture(t)
	f.ask("w1", issue, mailbox.KindQuestion, "Which colour?")
	f.ask("w2", issue, mailbox.KindQuestion, "Which font?")
	r := f.resumer(f.db, "")
	r.Channels[1].(*GitHubChannel).Client = func() (GitHub, error) {
		_, err := github.New(github.Options{BaseURL: f.fake.URL, Getenv: func(string) string { return "" }})
		return nil, err
	}
	err := r.Pass(context.Background())
	var failed *FailedError
	if !errors.As(err, &failed) || failed.Count != 1 {
		t.Fatalf("err = %v", err)
	}
	// One error (not one per ask), said once with the channel's name, and
	// its hint.
	out := f.stderr.String()
	if strings.Count(out, "\n") != 2 || strings.Count(out, "no token found") != 1 || strings.Contains(out, "github: github:") ||
		!strings.Contains(out, "\nresume: hint: log in with 'gh auth login'") {
		t.Errorf("stderr %q", out)
	}
}

// crashed is what the test crash hook panics with: nothing after the crash
// point runs, and Pass has no deferred writes that could tidy up.
type crashed string

func TestCrashPoints(t *testing.T) {
	for _, point := range []string{CrashAfterIntent, CrashAfterDecide, CrashAfterLaunch, CrashAfterSpawn} {
		t.Run(point, func(t *testing.T) {
			f := newFixture(t)
			ctx := context.Background()
			a := f.ask("w1", issue, mailbox.KindQuestion, "Which colour?")
			f.comment("carol", "MEMBER", "Blue.")
			r := f.resumer(f.db, "")
			r.Crash = func(p string) {
				if p == point {
					panic(crashed(p))
				}
			}
			func() {
				defer func() {
					if v := recover(); v != crashed(point) {
						t.Fatalf("recovered %v, want a crash at %s", v, point)
					}
				}()
				r.Pass(ctx)
			}()
			if f.intents() != 1 {
				t.Fatalf("no intent survived the crash at %s", point)
			}
			wantState := mailbox.AskAnswered
			if point == CrashAfterIntent {
				wantState = mailbox.AskAwaiting
			}
			// Only after the spawn is the answer delivered (its supervisor
			// recorded it); before, it is pending.
			wantRun := ""
			if point == CrashAfterSpawn {
				wantRun = "respawn-1"
			}
			if got := f.state(a.ID); got.State != wantState || got.ResumedRun != wantRun {
				t.Fatalf("after the crash: %+v", got)
			}
			// The next pass, in a new process.
			db := f.open()
			r2 := f.resumer(db, "")
			if err := r2.Pass(ctx); err != nil {
				t.Fatalf("second pass: %v\n%s", err, f.stderr.String())
			}
			if f.spawnCount() != 1 {
				t.Fatalf("%d spawns, want exactly 1", f.spawnCount())
			}
			got := f.state(a.ID)
			if got.State != mailbox.AskAnswered || got.ResumedRun != f.spawns[0].Run || got.LaunchRun != "" || f.intents() != 0 {
				t.Errorf("after recovery: %+v, %d intents", got, f.intents())
			}
			wantStatus := "ready"
			if point == CrashAfterSpawn {
				wantStatus = StatusRecovered
			}
			if len(f.resumed) != 1 || f.resumed[0].Status != wantStatus {
				t.Errorf("reported %+v", f.resumed)
			}
			if err := r2.Pass(ctx); err != nil || f.spawnCount() != 1 || len(f.resumed) != 1 {
				t.Errorf("third pass: %v, %d spawns", err, f.spawnCount())
			}
		})
	}
}

func TestRespawnFailure(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	gh := f.ask("w1", issue, mailbox.KindQuestion, "Which colour?")
	local := f.ask("w2", "", mailbox.KindQuestion, "Which font?")
	f.comment("carol", "MEMBER", "Blue.")
	if _, err := AnswerLocal(ctx, f.db, LocalAnswer{ID: local.ID, Text: "Helvetica.", Decision: mailbox.DecisionAnswered, By: "tester"}); err != nil {
		t.Fatal(err)
	}
	f.spawnErr = errors.New(`unknown type "codx"`)
	err := f.resumer(f.db, "").Pass(ctx)
	var failed *FailedError
	if !errors.As(err, &failed) || failed.Count != 2 {
		t.Fatalf("err = %v", err)
	}
	if got := f.state(gh.ID); got.State != mailbox.AskAnswered || got.Answer != "Blue." || got.ResumedRun != "" || got.LaunchRun != "" {
		t.Errorf("GitHub answer not kept pending: %+v", got)
	}
	if got := f.state(local.ID); got.State != mailbox.AskAnswered || got.Answer != "Helvetica." || got.ResumedRun != "" {
		t.Errorf("local answer not kept: %+v", got)
	}
	if f.intents() != 0 {
		t.Error("intents left behind")
	}
	out := f.stderr.String()
	if !strings.Contains(out, `re-spawn t/w1: unknown type "codx"; the answer is kept and the next pass retries`) ||
		!strings.Contains(out, `re-spawn t/w2: unknown type "codx"; the answer is kept and the next pass retries`) {
		t.Errorf("stderr:\n%s", out)
	}
	// The agent is gone now: the next pass resumes both, once.
	f.spawnErr = nil
	if err := f.resumer(f.db, "").Pass(ctx); err != nil || f.spawnCount() != 2 {
		t.Fatalf("retry: %v, %d spawns", err, f.spawnCount())
	}
	if err := f.resumer(f.db, "").Pass(ctx); err != nil || f.spawnCount() != 2 {
		t.Fatalf("after: %v, %d spawns", err, f.spawnCount())
	}
	fencedOnce(t, f.spawns[0].Task+f.spawns[1].Task, "Helvetica.")
}

// A re-spawn of an agent that is still running, or that another spawn
// launched while this one stopped its run (spawn's record refused), waits
// for a later pass; the pass has not failed (a cron job must not alarm
// over it).
func TestRespawnDeferredWhileAgentRuns(t *testing.T) {
	for _, spawnErr := range []error{
		fmt.Errorf("%w: agent is already running: t/w1", ErrAgentBusy),
		fmt.Errorf("%w: t/w1: the agent was launched again meanwhile (run r9) by another spawn", ErrSuperseded),
	} {
		f := newFixture(t)
		ctx := context.Background()
		gh := f.ask("w1", issue, mailbox.KindQuestion, "Which colour?")
		f.comment("carol", "MEMBER", "Blue.")
		f.spawnErr = spawnErr
		if err := f.resumer(f.db, "").Pass(ctx); err != nil {
			t.Fatalf("%v: failed the pass: %v", spawnErr, err)
		}
		if got := f.state(gh.ID); got.State != mailbox.AskAnswered || got.LaunchRun != "" || got.ResumedRun != "" || f.intents() != 0 {
			t.Errorf("%v: ask %+v, %d intents; want the answer pending, no intent", spawnErr, got, f.intents())
		}
		if !strings.Contains(f.stderr.String(), "a later pass re-spawns t/w1 with the answer once it has exited") {
			t.Errorf("%v: stderr:\n%s", spawnErr, f.stderr.String())
		}
		f.spawnErr = nil
		if err := f.resumer(f.db, "").Pass(ctx); err != nil || f.spawnCount() != 1 {
			t.Fatalf("%v: retry: %v, %d spawns", spawnErr, err, f.spawnCount())
		}
	}
}

// TestClaimRaceWithoutLock races the claim path (intent, compare-and-set,
// re-spawn) from many goroutines, each with its own database connection and
// none holding the file lock, against ask answer: exactly one decision wins,
// and at most that one re-spawns.
func TestClaimRaceWithoutLock(t *testing.T) {
	for round := 0; round < 3; round++ {
		f := newFixture(t)
		ctx := context.Background()
		a := f.ask("w1", issue, mailbox.KindQuestion, "Which colour?")
		dec := mailbox.Decision{Answer: "Blue.", DecidedBy: "carol", Decision: mailbox.DecisionAnswered, Source: "https://github.com/octo/repo/issues/7#issuecomment-1"}
		const passes, locals = 40, 10
		var wg sync.WaitGroup
		var mu sync.Mutex
		localWins := 0
		start := make(chan struct{})
		for i := 0; i < passes+locals; i++ {
			db := f.open()
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if i >= passes {
					_, err := AnswerLocal(ctx, db, LocalAnswer{ID: a.ID, Text: "Red.", Decision: mailbox.DecisionAnswered, By: "tester"})
					if err == nil {
						mu.Lock()
						localWins++
						mu.Unlock()
					} else if !errors.Is(err, ErrAlreadyAnswered) {
						t.Error(err)
					}
					return
				}
				p := newPass(f.resumer(db, ""), ctx)
				if err := p.finish(p.claim(a, dec)); err != nil {
					t.Error(err)
				}
			}()
		}
		close(start)
		wg.Wait()
		got := f.state(a.ID)
		switch {
		case localWins+f.spawnCount() != 1:
			t.Fatalf("round %d: %d local wins and %d re-spawns, want exactly one winner", round, localWins, f.spawnCount())
		case localWins == 1 && (got.Answer != "Red." || got.ResumedRun != ""):
			t.Fatalf("local win recorded %+v", got)
		case localWins == 0 && (got.Answer != "Blue." || got.ResumedRun != "respawn-1"):
			t.Fatalf("pass win recorded %+v", got)
		}
		// Whatever won, one locked pass finishes the job with no second spawn.
		if err := f.resumer(f.db, "").Once(ctx); err != nil {
			t.Fatal(err)
		}
		if f.spawnCount() != 1 || f.intents() != 0 {
			t.Fatalf("round %d: %d spawns, %d intents after a clean pass", round, f.spawnCount(), f.intents())
		}
	}
}

func TestPassPostsUnpostedQuestion(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.agent("w1", issue)
	a, _, err := Record(ctx, f.db, mailbox.Ask{Team: "t", Agent: "w1", Issue: issue, Kind: mailbox.KindQuestion, Question: "Which colour?"})
	if err != nil {
		t.Fatal(err)
	}
	postFailed(ctx, f.db, a, errors.New("no token"))
	if err := f.resumer(f.db, "").Pass(ctx); err != nil {
		t.Fatal(err)
	}
	got := f.state(a.ID)
	if got.CommentID == 0 || got.PostError != "" || len(f.fake.Comments("octo", "repo", 7)) != 1 {
		t.Fatalf("not posted: %+v", got)
	}
	if !strings.Contains(f.stderr.String(), "posted ask 1 to octo/repo#7: https://github.com/octo/repo/issues/7#issuecomment-") {
		t.Errorf("stderr %q", f.stderr.String())
	}
	f.comment("carol", "MEMBER", "Blue.")
	if err := f.resumer(f.db, "").Pass(ctx); err != nil || f.spawnCount() != 1 {
		t.Fatalf("%v %d", err, f.spawnCount())
	}
}

// lostResponse posts the comment but reports a failure, like a response
// lost after GitHub acted.
type lostResponse struct{ GitHub }

func (l lostResponse) CreateComment(ctx context.Context, ref github.IssueRef, body string) (github.Comment, error) {
	l.GitHub.CreateComment(ctx, ref, body)
	return github.Comment{}, errors.New("github: 502 Bad Gateway (POST)")
}

// recordedQuestion records agent w1's question on the issue, not posted.
func (f *fixture) recordedQuestion() mailbox.Ask {
	f.t.Helper()
	f.agent("w1", issue)
	a, created, err := Record(context.Background(), f.db, mailbox.Ask{Team: "t", Agent: "w1", Run: "first-w1", Issue: issue, Kind: mailbox.KindQuestion, Question: "Which colour?"})
	if err != nil || !created {
		f.t.Fatal(err)
	}
	return a
}

func TestPostNeverTwice(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	a := f.recordedQuestion()
	// A stranger plants this ask's marker first: it must not pass for ours.
	f.comment("mallory", "NONE", QuestionComment(a))
	if _, err := Post(ctx, f.db, lostResponse{f.gh}, a, true); err == nil {
		t.Fatal("lost response not reported")
	}
	if got := f.state(a.ID); got.CommentID != 0 || !strings.Contains(got.PostError, "502") {
		t.Fatalf("after a lost response: %+v", got)
	}
	// Re-running ask for the same run: CreateAsk returns the same ask, and
	// Post finds the comment that did reach GitHub.
	again, created, err := Record(ctx, f.db, mailbox.Ask{Team: "t", Agent: "w1", Run: "first-w1", Issue: issue, Kind: mailbox.KindQuestion, Question: "Which colour?"})
	if err != nil || created || again.ID != a.ID {
		t.Fatalf("re-run: %+v %v %v", again, created, err)
	}
	posted, err := Post(ctx, f.db, f.gh, again, created)
	if err != nil {
		t.Fatal(err)
	}
	cs := f.fake.Comments("octo", "repo", 7)
	if len(cs) != 2 || posted.CommentID != cs[1].ID || cs[1].Login != githubtest.DefaultViewer || posted.PostError != "" {
		t.Fatalf("posted %+v; comments %+v", posted, cs)
	}
	if qt, err := f.db.AskQuestionTime(ctx, posted); err != nil || !qt.Equal(cs[1].CreatedAt) {
		t.Errorf("question time %v %v", qt, err)
	}
	// And once more: still one comment of ours.
	if _, err := Post(ctx, f.db, f.gh, posted, false); err != nil || len(f.fake.Comments("octo", "repo", 7)) != 2 {
		t.Errorf("third post: %v", err)
	}
}

// A secondary rate limit on GET /user, which GitHub may send as a 403 with
// neither Retry-After nor X-RateLimit-Remaining, is a rate limit, not the
// 403 of a GitHub App token that may not read /user: the look for the
// question a lost response left on the issue fails, rather than taking
// only a bot's comments for ours, missing this token's and posting the
// question again. Once the limit has passed, the look finds it.
func TestPostNeverTwiceThroughASecondaryRateLimit(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	a := f.recordedQuestion()
	if _, err := Post(ctx, f.db, lostResponse{f.gh}, a, true); err == nil {
		t.Fatal("lost response not reported")
	}
	if err := f.fake.Fail(githubtest.Failure{Count: 1, PathPrefix: "/user", Status: 403,
		Message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}); err != nil {
		t.Fatal(err)
	}
	again, err := f.db.Ask(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Post(ctx, f.db, f.gh, again, false); !errors.Is(err, github.ErrRateLimited) {
		t.Errorf("post under a secondary rate limit: %v, want ErrRateLimited", err)
	}
	if n := len(f.fake.Comments("octo", "repo", 7)); n != 1 {
		t.Fatalf("%d question comments on the issue, want 1: the question was posted twice", n)
	}
	if again, err = f.db.Ask(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	posted, err := Post(ctx, f.db, f.gh, again, false)
	if cs := f.fake.Comments("octo", "repo", 7); err != nil || len(cs) != 1 || posted.CommentID != cs[0].ID {
		t.Fatalf("after the limit: %v, posted %+v, comments %+v", err, posted, cs)
	}
}

func TestRecordAndAnswerLocal(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, _, err := Record(ctx, f.db, mailbox.Ask{Team: "t", Agent: "ghost", Kind: mailbox.KindQuestion, Question: "?"}); !errors.Is(err, ErrAgentNeverLaunch) {
		t.Errorf("unknown agent: %v", err)
	}
	f.agent("w1", "")
	for q, want := range map[string]error{"  \n": ErrEmptyQuestion, strings.Repeat("é", MaxQuestion+1): ErrQuestionTooLong, "a\x00b": mailbox.ErrBodyNUL} {
		if _, _, err := Record(ctx, f.db, mailbox.Ask{Team: "t", Agent: "w1", Kind: mailbox.KindQuestion, Question: q}); !errors.Is(err, want) {
			t.Errorf("question %.10q: %v, want %v", q, err, want)
		}
	}
	q := f.ask("w1", "", mailbox.KindQuestion, "Which colour?")
	ap := f.ask("w2", "", mailbox.KindApproval, "May I?")
	testers, err := ParseDeciders("tester", nil)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		la   LocalAnswer
		want error
	}{
		{LocalAnswer{ID: q.ID, Decision: mailbox.DecisionApproved}, ErrNotApproval},
		{LocalAnswer{ID: q.ID, Decision: mailbox.DecisionAnswered, Text: " "}, ErrEmptyAnswer},
		{LocalAnswer{ID: ap.ID, Decision: mailbox.DecisionAnswered, Text: "sure"}, ErrNeedsDecision},
		{LocalAnswer{ID: q.ID, Decision: mailbox.DecisionAnswered, Text: "a\x00"}, ErrBadAnswer},
		{LocalAnswer{ID: 99, Decision: mailbox.DecisionAnswered, Text: "x"}, mailbox.ErrNotFound},
		// Approvals fail closed: no list, or a person not on it.
		{LocalAnswer{ID: ap.ID, Decision: mailbox.DecisionApproved, By: "tester"}, ErrNotDecider},
		{LocalAnswer{ID: ap.ID, Decision: mailbox.DecisionApproved, By: "mallory", Deciders: testers}, ErrNotDecider},
	}
	for _, c := range checks {
		if _, err := AnswerLocal(ctx, f.db, c.la); !errors.Is(err, c.want) {
			t.Errorf("%+v: %v, want %v", c.la, err, c.want)
		}
	}
	got, err := AnswerLocal(ctx, f.db, LocalAnswer{ID: ap.ID, Decision: mailbox.DecisionRejected, By: "tester", Deciders: testers})
	if err != nil || got.State != mailbox.AskAnswered || got.Decision != mailbox.DecisionRejected || got.Source != SourceLocal {
		t.Fatalf("reject: %+v %v", got, err)
	}
	if _, err := AnswerLocal(ctx, f.db, LocalAnswer{ID: ap.ID, Decision: mailbox.DecisionApproved, By: "tester", Deciders: testers}); !errors.Is(err, ErrAlreadyAnswered) {
		t.Errorf("second answer: %v", err)
	}
}

func TestMirrorSlack(t *testing.T) {
	var got map[string]string
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s", r.Method, r.Header.Get("Content-Type"))
		}
		json.NewDecoder(r.Body).Decode(&got)
		w.WriteHeader(status)
		io.WriteString(w, "invalid_token")
	}))
	defer srv.Close()
	a := mailbox.Ask{ID: 3, Team: "t", Agent: "w1", Kind: mailbox.KindApproval, Question: "Deploy <!channel> & more?",
		Issue: issue, CommentURL: "https://github.com/octo/repo/issues/7#issuecomment-9"}
	if err := MirrorSlack(context.Background(), srv.Client(), srv.URL+"/services/SECRET", a); err != nil {
		t.Fatal(err)
	}
	want := "teamkit: agent w1 of team t asks for approval (ask 3):\nDeploy &lt;!channel&gt; &amp; more?\n" +
		"Answer on GitHub: https://github.com/octo/repo/issues/7#issuecomment-9 (a decider, with /approve or /reject)"
	if got["text"] != want || len(got) != 1 {
		t.Errorf("payload %q\nwant %q", got, want)
	}
	status = http.StatusForbidden
	err := MirrorSlack(context.Background(), srv.Client(), srv.URL+"/services/SECRET", a)
	if err == nil || !strings.Contains(err.Error(), "HTTP 403 invalid_token") || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("failure: %v", err)
	}
	srv.Close()
	err = MirrorSlack(context.Background(), http.DefaultClient, srv.URL+"/services/SECRET", a)
	if err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("down: %v", err)
	}
	if err := MirrorSlack(context.Background(), http.DefaultClient, "not a url", a); err == nil {
		t.Error("bad URL accepted")
	}
	if m := SlackMessage(mailbox.Ask{ID: 4, Team: "t", Agent: "w1", Question: "Q?"}); !strings.HasSuffix(m, "Answer locally: ask answer 4") {
		t.Errorf("local message %q", m)
	}
}

func TestOnceLockAndPause(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.ask("w1", issue, mailbox.KindQuestion, "Which colour?")
	f.comment("carol", "MEMBER", "Blue.")
	r := f.resumer(f.db, "")

	held, err := f.db.Lock("t", LockKey)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := held.TryLock(); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if err := r.Once(ctx); !errors.Is(err, ErrLockHeld) || f.spawnCount() != 0 {
		t.Fatalf("lock held: %v", err)
	}
	held.Unlock()

	if err := Pause(ctx, f.db, "t", time.Now()); err != nil {
		t.Fatal(err)
	}
	if p, err := Paused(ctx, f.db, "t"); !p || err != nil {
		t.Fatal(p, err)
	}
	if err := r.Once(ctx); !errors.Is(err, ErrPaused) || f.spawnCount() != 0 {
		t.Fatalf("paused: %v", err)
	}
	if err := Unpause(ctx, f.db, "t"); err != nil {
		t.Fatal(err)
	}
	if err := r.Once(ctx); err != nil || f.spawnCount() != 1 {
		t.Fatalf("unpaused: %v %d", err, f.spawnCount())
	}
}

func TestWatchBacksOffAndObeysPause(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.ask("w1", issue, mailbox.KindQuestion, "Which colour?")
	f.comment("carol", "MEMBER", "Blue.")
	local := f.ask("w2", "", mailbox.KindQuestion, "Which door?")
	if err := f.fake.Fail(githubtest.Failure{Count: -1, Status: 503}); err != nil {
		t.Fatal(err)
	}
	Pause(ctx, f.db, "t", time.Now())
	r := f.resumer(f.db, "")
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r.Now = func() time.Time { return clock }
	posted := len(f.fake.Requests())
	var waits []time.Duration
	var read []bool // per pass after the pause: whether it read GitHub
	last := posted
	r.Sleep = func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		clock = clock.Add(d)
		n := len(f.fake.Requests())
		if len(waits) > 2 {
			read = append(read, n > last)
		}
		last = n
		switch len(waits) {
		case 2:
			// Two iterations paused: nothing was read or spawned.
			if n := len(f.fake.Requests()) - posted; n != 0 {
				t.Errorf("%d requests while paused", n)
			}
			Unpause(ctx, f.db, "t")
		case 5:
			// GitHub is backing off; a local answer comes back at the
			// next pass all the same, one interval later.
			if _, err := AnswerLocal(ctx, f.db, LocalAnswer{ID: local.ID, Text: "Green.", Decision: mailbox.DecisionAnswered, By: "tester"}); err != nil {
				t.Error(err)
			}
		case 6:
			if f.state(local.ID).ResumedRun == "" {
				t.Error("the local answer was not carried back by the next pass")
			}
		case 8:
			f.fake.ClearFailures()
		case 10:
			cancel()
		}
		return ctx.Err()
	}
	if err := r.Watch(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	// The passes keep the interval; GitHub alone backs off: read at 0, 1,
	// 3 min (after waits of 1, 2, 4 min it is due at 1, 3, 7 min), skipped
	// in between, and read again (healed) at 7 min.
	m := time.Minute
	if want := []time.Duration{m, m, m, m, m, m, m, m, m, m}; fmt.Sprint(waits) != fmt.Sprint(want) {
		t.Errorf("waits %v, want %v", waits, want)
	}
	if want := []bool{true, true, false, true, false, false, false, true}; fmt.Sprint(read) != fmt.Sprint(want) {
		t.Errorf("GitHub read by the passes %v, want %v", read, want)
	}
	if f.spawnCount() != 2 {
		t.Errorf("%d spawns after recovery, want the local answer's and GitHub's", f.spawnCount())
	}
	out := f.stderr.String()
	for _, s := range []string{"team t is paused; not resuming until 'resume unpause t'", "team t is no longer paused",
		"resume: error: ask 1 (t/w1, octo/repo#7): github: 503", "\nresume: github: down: 503 Service Unavailable", "\nresume: github: ok again\n"} {
		if !strings.Contains(out, s) {
			t.Errorf("stderr lacks %q:\n%s", s, out)
		}
	}
	if strings.Count(out, "is paused") != 1 || strings.Count(out, "github: down") != 1 || strings.Contains(out, "pass failed") {
		t.Errorf("the pause or GitHub's health was said more than once, or the pass backed off:\n%s", out)
	}

	// A pause switch that cannot be read counts as paused.
	f2 := newFixture(t)
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	f2.ask("w1", issue, mailbox.KindQuestion, "Which colour?")
	f2.comment("carol", "MEMBER", "Blue.")
	broken := f2.open()
	broken.Close()
	r2 := f2.resumer(broken, "")
	before := len(f2.fake.Requests())
	n := 0
	r2.Sleep = func(ctx context.Context, d time.Duration) error {
		if n++; n == 2 {
			cancel2()
		}
		return ctx.Err()
	}
	if err := r2.Watch(ctx2, time.Second); err != nil {
		t.Fatal(err)
	}
	if f2.spawnCount() != 0 || len(f2.fake.Requests()) != before {
		t.Error("resumed with an unreadable switch")
	}
	if !strings.Contains(f2.stderr.String(), "cannot read the pause switch of team t, so treating it as paused") {
		t.Errorf("stderr %q", f2.stderr.String())
	}
}

// A GitHub App or Actions token may not read /user (403). Its own comments
// are then known by the question comment it posted (and, before that, as a
// bot's): a reaction-only decision, with the comment listing unchanged (304),
// still resolves, and a re-posted ask still finds its first post.
func TestTokenWithoutUserEndpoint(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.fake.SetViewer("github-actions[bot]")
	if err := f.fake.Fail(githubtest.Failure{Count: -1, PathPrefix: "/user", Status: 403, Message: "Resource not accessible by integration"}); err != nil {
		t.Fatal(err)
	}
	a := f.ask("w1", issue, mailbox.KindApproval, "May I deploy?")

	// A lost response to the post: asking again finds the bot's comment
	// by its marker, not a person's copy of the marker, and posts nothing.
	f.comment("mallory", "NONE", QuestionComment(a))
	lost := a
	lost.CommentID, lost.CommentURL = 0, ""
	found, err := Post(ctx, f.db, f.client(), lost, false)
	if err != nil || found.CommentID != a.CommentID {
		t.Fatalf("re-post: comment %d, %v; want the bot's %d", found.CommentID, err, a.CommentID)
	}
	if n := len(f.fake.Comments("octo", "repo", 7)); n != 2 {
		t.Fatalf("%d comments; the question was posted again", n)
	}

	if err := f.resumer(f.db, "bob").Pass(ctx); err != nil || f.spawnCount() != 0 {
		t.Fatalf("first pass: %v, %d spawns", err, f.spawnCount())
	}
	if _, err := f.fake.AddReaction(a.CommentID, "bob", "+1"); err != nil {
		t.Fatal(err)
	}
	if err := f.resumer(f.db, "bob").Pass(ctx); err != nil || f.spawnCount() != 1 {
		t.Fatalf("reaction pass: %v, %d spawns; want the approval resumed", err, f.spawnCount())
	}
	if got := f.state(a.ID); got.Decision != mailbox.DecisionApproved || got.DecidedBy != "bob" {
		t.Fatalf("ask = %+v", got)
	}
}

// TestParallelRespawns: a pass re-spawns independent agents at once, never
// more than Parallel, and two answers for one agent one after the other.
// Each spawn here waits until Parallel spawns are under way together (or
// the pass has nothing more to start), which a pass re-spawning one at a
// time would never reach.
func TestParallelRespawns(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	const agents, parallel = 7, 3
	for i := 1; i <= agents; i++ {
		a := f.ask(fmt.Sprintf("w%d", i), "", mailbox.KindQuestion, "Which colour?")
		if _, err := AnswerLocal(ctx, f.db, LocalAnswer{ID: a.ID, Text: "Blue.", Decision: mailbox.DecisionAnswered, By: "tester"}); err != nil {
			t.Fatal(err)
		}
	}
	// A second answered ask of w1, from a later run: its re-spawn waits
	// for the first.
	second, _, err := Record(ctx, f.db, mailbox.Ask{Team: "t", Agent: "w1", Run: "second-w1", Kind: mailbox.KindQuestion, Question: "And the font?"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := AnswerLocal(ctx, f.db, LocalAnswer{ID: second.ID, Text: "Serif.", Decision: mailbox.DecisionAnswered, By: "tester"}); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	inflight, most, total := 0, 0, 0
	perAgent := map[string]int{}
	record := f.spawner(f.db)
	r := f.resumer(f.db, "")
	r.Parallel = parallel
	r.Spawn = func(ctx context.Context, req SpawnRequest) (SpawnResult, error) {
		mu.Lock()
		inflight++
		total++
		perAgent[req.Name]++
		if perAgent[req.Name] > 1 {
			t.Errorf("two re-spawns of %s at once", req.Name)
		}
		most = max(most, inflight)
		cond.Broadcast()
		// Wait for company: the first `parallel` spawns meet here.
		deadline := time.Now().Add(60 * time.Second)
		for total <= parallel && inflight < parallel && time.Now().Before(deadline) {
			go func() { time.Sleep(50 * time.Millisecond); cond.Broadcast() }()
			cond.Wait()
		}
		mu.Unlock()
		res, err := record(ctx, req)
		mu.Lock()
		inflight--
		perAgent[req.Name]--
		mu.Unlock()
		return res, err
	}
	if err := r.Pass(ctx); err != nil {
		t.Fatalf("pass: %v\n%s", err, f.stderr.String())
	}
	if most != parallel {
		t.Errorf("at most %d re-spawns ran at once, want %d", most, parallel)
	}
	if f.spawnCount() != agents+1 || len(f.resumed) != agents+1 {
		t.Fatalf("%d spawns, %d reported, want %d", f.spawnCount(), len(f.resumed), agents+1)
	}
	for _, id := range []int64{1, second.ID} {
		if got := f.state(id); got.ResumedRun == "" {
			t.Errorf("ask %d not resumed: %+v", id, got)
		}
	}
	if f.intents() != 0 {
		t.Errorf("%d intents left", f.intents())
	}
}

// An answer's re-spawn keeps a wake agent a wake agent (spawn --wake), and
// leaves any other as it was.
func TestRespawnKeepsWake(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	woken := f.ask("w1", "", mailbox.KindQuestion, "Which font?")
	plain := f.ask("w2", "", mailbox.KindQuestion, "Which colour?")
	code := 0
	if err := f.db.RecordLaunch(ctx, mailbox.Agent{Team: "t", Name: "w1", Type: "asker", Run: "first-w1", State: mailbox.StateExited,
		Task: "Original task of w1.", Workdir: f.dir, ExitCode: &code, Wake: mailbox.WakeMail}); err != nil {
		t.Fatal(err)
	}
	for _, a := range []mailbox.Ask{woken, plain} {
		if _, err := AnswerLocal(ctx, f.db, LocalAnswer{ID: a.ID, Text: "Any.", Decision: mailbox.DecisionAnswered, By: "tester"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.resumer(f.db, "").Pass(ctx); err != nil {
		t.Fatal(err)
	}
	wake := map[string]bool{}
	for _, s := range f.spawns {
		wake[s.Name] = s.Wake
	}
	if len(f.spawns) != 2 || !wake["w1"] || wake["w2"] {
		t.Fatalf("re-spawns' wake: %v (%d re-spawns); want w1 true, w2 false", wake, len(f.spawns))
	}
}

// heldChannel is a channel that holds every ask and finds dec for it,
// after wait returns (a slow read: GitHub retrying a 5xx, say).
type heldChannel struct {
	name string
	dec  mailbox.Decision
	wait func(ctx context.Context, a mailbox.Ask)
}

func (c *heldChannel) Name() string                       { return c.name }
func (c *heldChannel) Holds(mailbox.Ask) bool             { return true }
func (c *heldChannel) Describe(mailbox.Ask) Description   { return Description{} }
func (c *heldChannel) Ready(context.Context, Round) error { return nil }
func (c *heldChannel) Post(_ context.Context, _ *mailbox.DB, a mailbox.Ask, _ bool) (mailbox.Ask, error) {
	return a, nil
}
func (c *heldChannel) Find(ctx context.Context, _ Round, a mailbox.Ask) (mailbox.Decision, bool, error) {
	if c.wait != nil {
		c.wait(ctx, a)
	}
	return c.dec, true, nil
}

// Two channels hold one ask (GitHub and Slack) and both hold an answer.
// The fast one claims it, and its re-spawn runs and settles (the intent
// cleared) while the slow one is still reading. The slow one's claim comes
// after the decision: it must leave no intent behind, which the next pass
// would take for a crashed resume and report the same answer resumed a
// second time ("recovered").
func TestLosingClaimLeavesNoIntent(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	a := f.ask("w1", "", mailbox.KindQuestion, "Which colour?")
	settled := func(ctx context.Context, a mailbox.Ask) {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			got, err := f.db.Ask(ctx, a.ID)
			if err == nil && got.ResumedRun != "" && f.intents() == 0 {
				return
			}
		}
	}
	fast := &heldChannel{name: "fast", dec: mailbox.Decision{Answer: "Blue.", DecidedBy: "carol", Decision: mailbox.DecisionAnswered, Source: "https://example.com/c/1"}}
	slow := &heldChannel{name: "slow", wait: settled, dec: mailbox.Decision{Answer: "Red.", DecidedBy: "dave", Decision: mailbox.DecisionAnswered, Source: "https://example.com/c/2"}}
	r := f.resumer(f.db, "")
	r.Channels = []Channel{fast, slow}

	if err := r.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if f.spawnCount() != 1 || len(f.resumed) != 1 || f.state(a.ID).ResumedRun == "" {
		t.Fatalf("first pass: %d spawns, %d reported, ask %+v", f.spawnCount(), len(f.resumed), f.state(a.ID))
	}
	if n := f.intents(); n != 0 {
		t.Errorf("after the first pass %d resume intent(s) are left for ask %d, which was delivered and settled", n, a.ID)
	}
	// A later pass (nothing new happened) must report nothing.
	r2 := f.resumer(f.db, "")
	r2.Channels = []Channel{LocalChannel{}}
	if err := r2.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if len(f.resumed) != 1 {
		t.Errorf("ask %d was reported resumed %d times: %+v", a.ID, len(f.resumed), f.resumed)
	}
}

// Once GitHub is out of reach for one ask of a pass, the pass's other asks
// on it are not tried (each waited out the client's retries on its own: a
// dozen asks took a minute with the network down): a pass over three asks
// makes the requests a pass over one makes, says why for each, and leaves
// them all awaiting. The next pass tries again.
func TestPassStopsTryingGitHubOnceDown(t *testing.T) {
	ctx := context.Background()
	requests := func(n int) (int, *fixture) {
		f := newFixture(t)
		for i := range n {
			f.ask(fmt.Sprintf("w%d", i+1), issue, mailbox.KindQuestion, "Which colour?")
		}
		if err := f.fake.Fail(githubtest.Failure{Count: -1, Status: 503}); err != nil {
			t.Fatal(err)
		}
		before := len(f.fake.Requests())
		f.resumer(f.db, "").Once(ctx)
		return len(f.fake.Requests()) - before, f
	}
	one, _ := requests(1)
	three, f := requests(3)
	if one == 0 || three != one {
		t.Errorf("a pass over three asks made %d requests, one over one ask %d", three, one)
	}
	out := f.stderr.String()
	if n := strings.Count(out, "not tried: an earlier ask of this pass found GitHub out of reach (github: 503"); n != 2 {
		t.Errorf("%d asks said why they were not tried, want 2:\n%s", n, out)
	}
	for id := int64(1); id <= 3; id++ {
		if s := f.state(id); s.State != mailbox.AskAwaiting {
			t.Errorf("ask %d is %s, want awaiting", id, s.State)
		}
	}
	f.fake.ClearFailures()
	before := len(f.fake.Requests())
	f.resumer(f.db, "").Once(ctx)
	if len(f.fake.Requests())-before < 3 {
		t.Errorf("the next pass did not read the three asks again")
	}

	// An ask the pass would not have read from GitHub anyway (an approval
	// with no deciders to judge it) is not said to be "not tried".
	g := newFixture(t)
	g.ask("w1", issue, mailbox.KindQuestion, "Which colour?")
	g.ask("w2", issue, mailbox.KindApproval, "May I deploy?")
	if err := g.fake.Fail(githubtest.Failure{Count: -1, Status: 503}); err != nil {
		t.Fatal(err)
	}
	g.resumer(g.db, "").Once(ctx)
	if out := g.stderr.String(); strings.Contains(out, "not tried") || !strings.Contains(out, "no deciders are configured") {
		t.Errorf("an approval without deciders, after GitHub failed the pass:\n%s", out)
	}
}
