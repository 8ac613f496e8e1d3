package github_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/teamkit/teamkit/internal/githubtest"
	"github.com/teamkit/teamkit/pkg/github"
)

// storedToken is the gh login TestMain stores for host "localhost".
const storedToken = "stored-gh-token"

// TestMain isolates the tests from the developer's gh setup: go-gh reads gh's
// config once per process, so it is pointed at a temporary directory (holding
// only a login for "localhost") before any test runs, the gh binary is made
// unfindable, and token variables are cleared.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "github-test-gh-config")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	hosts := "localhost:\n    oauth_token: " + storedToken + "\n    user: stored-user\n"
	if err := os.WriteFile(filepath.Join(dir, "hosts.yml"), []byte(hosts), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("GH_CONFIG_DIR", dir)
	os.Setenv("GH_PATH", filepath.Join(dir, "no-such-gh"))
	for _, v := range []string{"GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN", "GH_HOST", "GITHUB_API_URL", "GH_DEBUG"} {
		os.Unsetenv(v)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var ref = github.IssueRef{Owner: "octo", Repo: "repo", Number: 12}

// fixture is a fake GitHub behind a header-recording listener, and a client
// whose retry waits are recorded instead of waited.
type fixture struct {
	fake   *githubtest.Server
	ts     *httptest.Server
	client *github.Client

	mu      sync.Mutex
	sleeps  []time.Duration
	headers []http.Header
	// serve, when set, answers in the fake's place (and may call it).
	serve http.HandlerFunc
}

func newFixture(t *testing.T, o github.Options) *fixture {
	t.Helper()
	f := &fixture{fake: githubtest.New()}
	f.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.headers = append(f.headers, r.Header.Clone())
		serve := f.serve
		f.mu.Unlock()
		if serve != nil {
			serve(w, r)
			return
		}
		f.fake.ServeHTTP(w, r)
	}))
	t.Cleanup(f.ts.Close)
	if err := f.fake.AddIssue(ref.Owner, ref.Repo, ref.Number, "alice"); err != nil {
		t.Fatal(err)
	}
	if o.BaseURL == "" {
		o.BaseURL = f.ts.URL
	}
	if o.Token == "" && o.Getenv == nil {
		o.Token = githubtest.DefaultToken
	}
	if o.Getenv == nil {
		o.Getenv = func(string) string { return "" }
	}
	github.SetRetryWait(t, func(d time.Duration) time.Duration {
		f.mu.Lock()
		f.sleeps = append(f.sleeps, d)
		f.mu.Unlock()
		return 0
	})
	c, err := github.New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	f.client = c
	return f
}

func (f *fixture) recordedSleeps() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.sleeps...)
}

func (f *fixture) fail(t *testing.T, fl githubtest.Failure) {
	t.Helper()
	if err := f.fake.Fail(fl); err != nil {
		t.Fatal(err)
	}
}

func TestViewerIssueAndHeaders(t *testing.T) {
	f := newFixture(t, github.Options{})
	ctx := context.Background()
	login, err := f.client.Viewer(ctx)
	if err != nil || login != githubtest.DefaultViewer {
		t.Fatalf("Viewer = %q, %v", login, err)
	}
	is, err := f.client.Issue(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if is.Number != 12 || is.Title != "Issue 12" || is.User.Login != "alice" || is.State != "open" || is.HTMLURL != "https://github.com/octo/repo/issues/12" {
		t.Errorf("Issue = %+v", is)
	}
	h := f.headers[0]
	if got := h.Get("Authorization"); got != "token "+githubtest.DefaultToken {
		t.Errorf("Authorization = %q", got)
	}
	if got := h.Get("Accept"); got != "application/vnd.github+json" {
		t.Errorf("Accept = %q", got)
	}
	if got := h.Get("X-GitHub-Api-Version"); got != "2022-11-28" {
		t.Errorf("X-GitHub-Api-Version = %q", got)
	}
	if got := h.Get("User-Agent"); !strings.HasPrefix(got, "go-gh") {
		t.Errorf("User-Agent = %q", got)
	}
	if _, err := f.client.Issue(ctx, github.IssueRef{Owner: "..", Repo: "x", Number: 1}); err == nil {
		t.Error("Issue accepted a path-traversing ref")
	}
}

func TestErrorsAreTyped(t *testing.T) {
	ctx := context.Background()

	t.Run("401", func(t *testing.T) {
		f := newFixture(t, github.Options{Token: "wrong"})
		_, err := f.client.Viewer(ctx)
		if !errors.Is(err, github.ErrUnauthorized) {
			t.Fatalf("err = %v, want ErrUnauthorized", err)
		}
		if got, want := err.Error(), "github: 401 Unauthorized (GET /user): Bad credentials"; got != want {
			t.Errorf("message %q, want %q", got, want)
		}
		if n := f.fake.Counts().Total; n != 1 {
			t.Errorf("401 retried: %d requests", n)
		}
	})

	t.Run("404", func(t *testing.T) {
		f := newFixture(t, github.Options{})
		_, err := f.client.Comments(ctx, github.IssueRef{Owner: "o", Repo: "r", Number: 9}, time.Time{}, "")
		var apiErr *github.APIError
		if !errors.Is(err, github.ErrNotFound) || !errors.As(err, &apiErr) || apiErr.Status != 404 {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
		if got, want := err.Error(), "github: 404 Not Found (GET /repos/o/r/issues/9/comments): Not Found"; got != want {
			t.Errorf("message %q, want %q", got, want)
		}
		if errors.Is(err, github.ErrUnavailable) || errors.Is(err, github.ErrForbidden) {
			t.Error("404 matches other sentinels")
		}
	})

	t.Run("422", func(t *testing.T) {
		f := newFixture(t, github.Options{})
		f.fail(t, githubtest.Failure{Count: 1, Status: 422, Message: "Validation Failed"})
		_, err := f.client.CreateComment(ctx, ref, "hi")
		if !errors.Is(err, github.ErrInvalid) {
			t.Fatalf("err = %v, want ErrInvalid", err)
		}
		if !strings.Contains(err.Error(), "422 Unprocessable Entity (POST /repos/octo/repo/issues/12/comments): Validation Failed") {
			t.Errorf("message %q", err)
		}
		if n := f.fake.Counts().Total; n != 1 {
			t.Errorf("422 retried: %d requests", n)
		}
	})

	t.Run("403 without rate limit", func(t *testing.T) {
		f := newFixture(t, github.Options{})
		f.fail(t, githubtest.Failure{Count: 1, Status: 403, Message: "Resource not accessible by integration"})
		_, err := f.client.Issue(ctx, ref)
		if !errors.Is(err, github.ErrForbidden) || errors.Is(err, github.ErrRateLimited) {
			t.Fatalf("err = %v, want ErrForbidden only", err)
		}
		if n := f.fake.Counts().Total; n != 1 {
			t.Errorf("plain 403 retried: %d requests", n)
		}
	})

	t.Run("empty comment refused locally", func(t *testing.T) {
		f := newFixture(t, github.Options{})
		if _, err := f.client.CreateComment(ctx, ref, " \n"); err == nil {
			t.Fatal("empty comment accepted")
		}
		if n := f.fake.Counts().Total; n != 0 {
			t.Errorf("%d requests for an empty comment", n)
		}
	})
}

func TestRetry500ThenSuccess(t *testing.T) {
	f := newFixture(t, github.Options{})
	f.fail(t, githubtest.Failure{Count: 1, Status: 500})
	login, err := f.client.Viewer(context.Background())
	if err != nil || login != githubtest.DefaultViewer {
		t.Fatalf("Viewer = %q, %v", login, err)
	}
	if n := f.fake.Counts().Total; n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	s := f.recordedSleeps()
	if len(s) != 1 || s[0] < 500*time.Millisecond || s[0] > time.Second {
		t.Errorf("sleeps = %v, want one backoff in [0.5s, 1s]", s)
	}
}

func TestRetry502ForeverGivesUp(t *testing.T) {
	f := newFixture(t, github.Options{})
	f.fail(t, githubtest.Failure{Count: -1, Status: 502})
	start := time.Now()
	_, err := f.client.Issue(context.Background(), ref)
	if !errors.Is(err, github.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	if !strings.HasPrefix(err.Error(), "github: 502 Bad Gateway (GET /repos/octo/repo/issues/12)") {
		t.Errorf("message %q", err)
	}
	if n := f.fake.Counts().Total; n != 4 {
		t.Errorf("%d requests, want 1 + MaxRetries(3)", n)
	}
	s := f.recordedSleeps()
	bounds := [][2]time.Duration{{500 * time.Millisecond, time.Second}, {time.Second, 2 * time.Second}, {2 * time.Second, 4 * time.Second}}
	if len(s) != 3 {
		t.Fatalf("sleeps = %v, want 3", s)
	}
	for i, b := range bounds {
		if s[i] < b[0] || s[i] > b[1] {
			t.Errorf("sleep %d = %v, want in %v", i, s[i], b)
		}
	}
	// Three real waits would take at least their sum (3.5 s or more); the
	// hook's zero waits take a small fraction of that.
	var waits time.Duration
	for _, d := range s {
		waits += d
	}
	if el := time.Since(start); el >= waits {
		t.Errorf("took %v, as long as the %v of waits chosen: sleeps were real", el, waits)
	}
}

func TestMaxRetriesOption(t *testing.T) {
	f := newFixture(t, github.Options{MaxRetries: 1})
	f.fail(t, githubtest.Failure{Count: -1, Status: 503})
	if _, err := f.client.Viewer(context.Background()); !errors.Is(err, github.ErrUnavailable) {
		t.Fatalf("err = %v", err)
	}
	if n := f.fake.Counts().Total; n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	g := newFixture(t, github.Options{MaxRetries: -1})
	g.fail(t, githubtest.Failure{Count: -1, Status: 503})
	g.client.Viewer(context.Background())
	if n := g.fake.Counts().Total; n != 1 {
		t.Errorf("MaxRetries -1: %d requests, want 1", n)
	}
}

func TestRetry429HonoursRetryAfter(t *testing.T) {
	f := newFixture(t, github.Options{})
	f.fail(t, githubtest.Failure{Count: 1, Status: 429, Headers: map[string]string{"Retry-After": "2"}})
	if _, err := f.client.Viewer(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := f.recordedSleeps(); len(s) != 1 || s[0] != 2*time.Second {
		t.Errorf("sleeps = %v, want [2s]", s)
	}
}

func TestRateLimit403WaitsForNearReset(t *testing.T) {
	f := newFixture(t, github.Options{})
	reset := time.Now().Add(5 * time.Second).Unix()
	f.fail(t, githubtest.Failure{Count: 1, Status: 403, Headers: map[string]string{
		"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": strconv.FormatInt(reset, 10)}})
	if _, err := f.client.Viewer(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := f.recordedSleeps()
	if len(s) != 1 || s[0] < 4*time.Second || s[0] > 7*time.Second {
		t.Errorf("sleeps = %v, want about 6s (reset + 1s)", s)
	}
}

func TestRateLimit403FarResetFailsFast(t *testing.T) {
	f := newFixture(t, github.Options{})
	reset := time.Now().Add(time.Hour).Truncate(time.Second)
	f.fail(t, githubtest.Failure{Count: -1, Status: 403, Headers: map[string]string{
		"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": strconv.FormatInt(reset.Unix(), 10)}})
	_, err := f.client.Comments(context.Background(), ref, time.Time{}, "")
	if !errors.Is(err, github.ErrRateLimited) || errors.Is(err, github.ErrForbidden) {
		t.Fatalf("err = %v, want ErrRateLimited", err)
	}
	var apiErr *github.APIError
	if !errors.As(err, &apiErr) || !apiErr.Reset.Equal(reset) {
		t.Fatalf("APIError = %+v, want Reset %v", apiErr, reset)
	}
	if !strings.Contains(err.Error(), "rate limit resets at "+reset.UTC().Format(time.RFC3339)) {
		t.Errorf("message %q lacks the reset time", err)
	}
	if n := f.fake.Counts().Total; n != 1 {
		t.Errorf("%d requests, want 1 (no retry)", n)
	}
	if s := f.recordedSleeps(); len(s) != 0 {
		t.Errorf("slept %v", s)
	}
}

func TestRetryAfterBeyondMaxWaitFailsFast(t *testing.T) {
	f := newFixture(t, github.Options{MaxWait: 10 * time.Second})
	f.fail(t, githubtest.Failure{Count: -1, Status: 429, Headers: map[string]string{"Retry-After": "30"}})
	_, err := f.client.Viewer(context.Background())
	var apiErr *github.APIError
	if !errors.Is(err, github.ErrRateLimited) || !errors.As(err, &apiErr) || apiErr.RetryAfter != 30*time.Second {
		t.Fatalf("err = %v (%+v)", err, apiErr)
	}
	if n := f.fake.Counts().Total; n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestRateLimitedAfterRetries(t *testing.T) {
	f := newFixture(t, github.Options{})
	f.fail(t, githubtest.Failure{Count: -1, Status: 403, Headers: map[string]string{"Retry-After": "1"}})
	_, err := f.client.Viewer(context.Background())
	if !errors.Is(err, github.ErrRateLimited) {
		t.Fatalf("err = %v", err)
	}
	if s := f.recordedSleeps(); len(s) != 3 || s[0] != time.Second {
		t.Errorf("sleeps = %v", s)
	}
}

func TestNetworkDown(t *testing.T) {
	f := newFixture(t, github.Options{})
	f.ts.Close()
	_, err := f.client.Viewer(context.Background())
	if !errors.Is(err, github.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	var netErr *github.NetworkError
	if !errors.As(err, &netErr) || netErr.Attempts != 4 {
		t.Fatalf("err = %#v, want *NetworkError after 4 attempts", err)
	}
	if !strings.Contains(err.Error(), "network unreachable") || strings.Contains(err.Error(), "\n") {
		t.Errorf("message %q", err)
	}
	if s := f.recordedSleeps(); len(s) != 3 {
		t.Errorf("sleeps = %v, want 3", s)
	}
	var opErr *net.OpError
	if !errors.As(err, &opErr) {
		t.Errorf("underlying error not exposed: %v", err)
	}
}

func TestDroppedConnection(t *testing.T) {
	ctx := context.Background()
	t.Run("GET is retried", func(t *testing.T) {
		f := newFixture(t, github.Options{})
		f.fail(t, githubtest.Failure{Count: 1, Drop: true})
		if _, err := f.client.Viewer(ctx); err != nil {
			t.Fatal(err)
		}
		if c := f.fake.Counts(); c.Total != 2 || c.Dropped != 1 {
			t.Errorf("counts = %+v", c)
		}
	})
	t.Run("POST is not retried", func(t *testing.T) {
		f := newFixture(t, github.Options{})
		f.fail(t, githubtest.Failure{Count: 1, Drop: true})
		_, err := f.client.CreateComment(ctx, ref, "question")
		if !errors.Is(err, github.ErrUnavailable) {
			t.Fatalf("err = %v, want ErrUnavailable", err)
		}
		if c := f.fake.Counts(); c.Total != 1 {
			t.Errorf("POST retried after the request was sent: %+v", c)
		}
	})
}

func TestCreateCommentRetries(t *testing.T) {
	ctx := context.Background()
	t.Run("502 after the write is not repeated", func(t *testing.T) {
		// A proxy in front of GitHub answers 502 after GitHub made the
		// comment: a second POST would post the question twice. The
		// failure is returned; ask finds the comment by its marker later.
		f := newFixture(t, github.Options{})
		var posts atomic.Int32
		f.mu.Lock()
		f.serve = func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && posts.Add(1) == 1 {
				f.fake.ServeHTTP(httptest.NewRecorder(), r)
				w.WriteHeader(http.StatusBadGateway)
				return
			}
			f.fake.ServeHTTP(w, r)
		}
		f.mu.Unlock()
		_, err := f.client.CreateComment(ctx, ref, "question")
		if !errors.Is(err, github.ErrUnavailable) {
			t.Fatalf("err = %v, want ErrUnavailable", err)
		}
		if got := f.fake.Comments(ref.Owner, ref.Repo, ref.Number); len(got) != 1 || posts.Load() != 1 {
			t.Errorf("%d comments stored after %d POSTs, want 1 of 1", len(got), posts.Load())
		}
	})
	t.Run("secondary rate limit", func(t *testing.T) {
		// GitHub documents a secondary rate limit with neither Retry-After
		// nor X-RateLimit-Remaining: waited out a minute, then posted.
		f := newFixture(t, github.Options{})
		f.fail(t, githubtest.Failure{Count: 1, Method: "POST", Status: 403,
			Message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."})
		if _, err := f.client.CreateComment(ctx, ref, "question"); err != nil {
			t.Fatal(err)
		}
		if got, sleeps := f.fake.Comments(ref.Owner, ref.Repo, ref.Number), f.recordedSleeps(); len(got) != 1 || len(sleeps) != 1 || sleeps[0] != time.Minute {
			t.Errorf("%d comments, waits %v; want 1 after a wait of 1m", len(got), sleeps)
		}
	})
	t.Run("connection refused", func(t *testing.T) {
		refused := &refuseFirst{next: http.DefaultTransport}
		f := newFixture(t, github.Options{Transport: refused})
		if _, err := f.client.CreateComment(ctx, ref, "question"); err != nil {
			t.Fatal(err)
		}
		if refused.calls != 2 || len(f.recordedSleeps()) != 1 {
			t.Errorf("calls %d sleeps %v", refused.calls, f.recordedSleeps())
		}
	})
}

// refuseFirst fails its first request the way a dial to a closed port does.
type refuseFirst struct {
	mu    sync.Mutex
	calls int
	next  http.RoundTripper
}

func (r *refuseFirst) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.calls++
	first := r.calls == 1
	r.mu.Unlock()
	if first {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	}
	return r.next.RoundTrip(req)
}

func TestContextCancelDuringWait(t *testing.T) {
	f := newFixture(t, github.Options{})
	f.fail(t, githubtest.Failure{Count: -1, Status: 500})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// An hour's wait, so that only the cancellation can end it.
	github.SetRetryWait(t, func(time.Duration) time.Duration {
		time.AfterFunc(10*time.Millisecond, cancel)
		return time.Hour
	})
	done := make(chan error, 1)
	go func() {
		_, err := f.client.Viewer(ctx)
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatal("cancelling the context did not end the wait")
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n := f.fake.Counts().Total; n != 1 {
		t.Errorf("%d requests after cancel", n)
	}
}

func TestCommentsConditional(t *testing.T) {
	f := newFixture(t, github.Options{})
	ctx := context.Background()
	id, _ := f.fake.AddComment(ref.Owner, ref.Repo, ref.Number, "bob", "MEMBER", "answer")
	p, err := f.client.Comments(ctx, ref, time.Time{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if p.NotModified || p.ETag == "" || len(p.Comments) != 1 {
		t.Fatalf("page = %+v", p)
	}
	c := p.Comments[0]
	if c.ID != id || c.Body != "answer" || c.User.Login != "bob" || c.User.Type != "User" || c.AuthorAssociation != "MEMBER" ||
		c.CreatedAt.IsZero() || c.UpdatedAt.IsZero() || !strings.Contains(c.HTMLURL, "#issuecomment-") {
		t.Errorf("comment = %+v", c)
	}
	before := f.fake.RateRemaining()
	p2, err := f.client.Comments(ctx, ref, time.Time{}, p.ETag)
	if err != nil {
		t.Fatal(err)
	}
	if !p2.NotModified || p2.ETag != p.ETag || len(p2.Comments) != 0 {
		t.Errorf("conditional page = %+v", p2)
	}
	if after := f.fake.RateRemaining(); after != before {
		t.Errorf("304 cost rate limit: %d → %d", before, after)
	}
	reqs := f.fake.Requests()
	last := reqs[len(reqs)-1]
	if last.Status != 304 || last.IfNoneMatch != p.ETag || !strings.Contains(last.Query, "per_page=100") {
		t.Errorf("last request = %+v", last)
	}
	f.fake.AddComment(ref.Owner, ref.Repo, ref.Number, "carol", "NONE", "more")
	p3, err := f.client.Comments(ctx, ref, time.Time{}, p.ETag)
	if err != nil {
		t.Fatal(err)
	}
	if p3.NotModified || p3.ETag == p.ETag || len(p3.Comments) != 2 {
		t.Errorf("changed page = %+v", p3)
	}
	if c := f.fake.Counts(); c.NotModified != 1 {
		t.Errorf("counts = %+v", c)
	}
}

func TestCommentsSince(t *testing.T) {
	f := newFixture(t, github.Options{})
	for i := 0; i < 3; i++ {
		f.fake.AddComment(ref.Owner, ref.Repo, ref.Number, "bob", "MEMBER", fmt.Sprint("c", i))
	}
	all := f.fake.Comments(ref.Owner, ref.Repo, ref.Number)
	p, err := f.client.Comments(context.Background(), ref, all[1].UpdatedAt, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Comments) != 2 || p.Comments[0].Body != "c1" || p.Comments[1].Body != "c2" {
		t.Errorf("since: %+v", p.Comments)
	}
	reqs := f.fake.Requests()
	if q := reqs[len(reqs)-1].Query; !strings.Contains(q, "since="+strings.ReplaceAll(all[1].UpdatedAt.Format(time.RFC3339), ":", "%3A")) {
		t.Errorf("query %q", q)
	}
}

func TestCommentsPagination(t *testing.T) {
	f := newFixture(t, github.Options{})
	for i := 0; i < 250; i++ {
		f.fake.AddComment(ref.Owner, ref.Repo, ref.Number, "bob", "MEMBER", fmt.Sprint("c", i))
	}
	ctx := context.Background()
	p, err := f.client.Comments(ctx, ref, time.Time{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Comments) != 250 {
		t.Fatalf("%d comments, want 250", len(p.Comments))
	}
	for i, c := range p.Comments {
		if c.Body != fmt.Sprint("c", i) {
			t.Fatalf("comment %d = %q", i, c.Body)
		}
	}
	reqs := f.fake.Requests()
	if len(reqs) != 3 || !strings.Contains(reqs[2].Query, "page=3") {
		t.Errorf("requests = %+v", reqs)
	}
	// The kept ETag is the first page's: it makes the first request a 304.
	p2, err := f.client.Comments(ctx, ref, time.Time{}, p.ETag)
	if err != nil || !p2.NotModified {
		t.Errorf("second pass = %+v, %v", p2, err)
	}
}

func TestPaginationRefusesForeignHost(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", `<https://evil.example/steal?page=2>; rel="next"`)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`[]`))
	}))
	defer ts.Close()
	c, err := github.New(github.Options{BaseURL: ts.URL, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Comments(context.Background(), ref, time.Time{}, ""); err == nil || !strings.Contains(err.Error(), "leaves") {
		t.Errorf("err = %v", err)
	}
}

func TestReactions(t *testing.T) {
	f := newFixture(t, github.Options{})
	ctx := context.Background()
	id, _ := f.fake.AddComment(ref.Owner, ref.Repo, ref.Number, githubtest.DefaultViewer, "NONE", "question")
	f.fake.AddReaction(id, "carol", "+1")
	f.fake.AddReaction(id, "dave", "-1")
	p, err := f.client.Reactions(ctx, ref, id, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Reactions) != 2 || p.Reactions[0].Content != "+1" || p.Reactions[0].User.Login != "carol" ||
		p.Reactions[1].Content != "-1" || p.Reactions[0].ID == 0 || p.Reactions[0].CreatedAt.IsZero() || p.ETag == "" {
		t.Errorf("reactions = %+v", p)
	}
	p2, err := f.client.Reactions(ctx, ref, id, p.ETag)
	if err != nil || !p2.NotModified {
		t.Errorf("conditional = %+v, %v", p2, err)
	}
	if _, err := f.client.Reactions(ctx, ref, 999999, ""); !errors.Is(err, github.ErrNotFound) {
		t.Errorf("missing comment: %v", err)
	}
	if _, err := f.client.Reactions(ctx, ref, 0, ""); err == nil {
		t.Error("comment id 0 accepted")
	}
}

func TestTokenPrecedence(t *testing.T) {
	ctx := context.Background()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cases := []struct {
		name  string
		opts  github.Options
		valid string
	}{
		{"GH_TOKEN over GITHUB_TOKEN", github.Options{Getenv: env(map[string]string{"GH_TOKEN": "gh", "GITHUB_TOKEN": "github"})}, "gh"},
		{"GITHUB_TOKEN alone", github.Options{Getenv: env(map[string]string{"GITHUB_TOKEN": "github"})}, "github"},
		{"Options.Token first", github.Options{Token: "explicit", Getenv: env(map[string]string{"GH_TOKEN": "gh"})}, "explicit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.opts)
			f.fake.SetTokens(tc.valid)
			if _, err := f.client.Viewer(ctx); err != nil {
				t.Fatalf("Viewer with %q accepted: %v", tc.valid, err)
			}
		})
	}
	t.Run("stored gh login", func(t *testing.T) {
		f := newFixture(t, github.Options{})
		base := strings.Replace(f.ts.URL, "127.0.0.1", "localhost", 1)
		c, err := github.New(github.Options{BaseURL: base, Getenv: env(nil)})
		if err != nil {
			t.Fatal(err)
		}
		if c.Host() != "localhost" {
			t.Errorf("Host = %q", c.Host())
		}
		f.fake.SetTokens(storedToken)
		if _, err := c.Viewer(ctx); err != nil {
			t.Fatalf("stored token not used: %v", err)
		}
	})
	t.Run("GITHUB_API_URL", func(t *testing.T) {
		f := newFixture(t, github.Options{})
		c, err := github.New(github.Options{Token: githubtest.DefaultToken,
			Getenv: env(map[string]string{"GITHUB_API_URL": f.ts.URL + "/"})})
		if err != nil {
			t.Fatal(err)
		}
		if c.BaseURL() != f.ts.URL {
			t.Errorf("BaseURL = %q", c.BaseURL())
		}
		if _, err := c.Viewer(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

func TestNoToken(t *testing.T) {
	// An empty gh config directory and no gh binary: nothing to find. (go-gh
	// reads its config once per process; TestMain already pointed it at a
	// directory without a login for these hosts.)
	t.Setenv("GH_CONFIG_DIR", t.TempDir())
	t.Setenv("GH_PATH", filepath.Join(t.TempDir(), "gh"))
	for _, base := range []string{"", "http://127.0.0.1:1"} {
		_, err := github.New(github.Options{BaseURL: base, Getenv: func(string) string { return "" }})
		if !errors.Is(err, github.ErrNoToken) {
			t.Fatalf("base %q: err = %v, want ErrNoToken", base, err)
		}
		if !strings.Contains(err.Error(), "set GH_TOKEN or run `gh auth login") {
			t.Errorf("message %q does not say how to fix it", err)
		}
	}
}

func TestBadBaseURL(t *testing.T) {
	for _, u := range []string{"ftp://x", "api.github.com", "http://", "https://u:p@h", "https://h/?q=1", "http://[::1"} {
		if _, err := github.New(github.Options{BaseURL: u, Token: "t"}); err == nil {
			t.Errorf("base %q accepted", u)
		}
	}
	c, err := github.New(github.Options{Token: "t", Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseURL() != github.DefaultBaseURL || c.Host() != "github.com" {
		t.Errorf("defaults: %q %q", c.BaseURL(), c.Host())
	}
}

func TestEnterpriseBasePath(t *testing.T) {
	fake := githubtest.New()
	fake.AddIssue(ref.Owner, ref.Repo, ref.Number, "alice")
	ts := httptest.NewServer(http.StripPrefix("/api/v3", fake))
	defer ts.Close()
	c, err := github.New(github.Options{BaseURL: ts.URL + "/api/v3", Token: githubtest.DefaultToken})
	if err != nil {
		t.Fatal(err)
	}
	if is, err := c.Issue(context.Background(), ref); err != nil || is.Number != ref.Number {
		t.Fatalf("Issue = %+v, %v", is, err)
	}
}

// A server that accepts the connection and never answers, or sends its
// headers and stalls in the body, fails each attempt after Options.Timeout:
// a GET is retried, a POST is not (it may have been acted on), and either
// ends in ErrUnavailable instead of holding ask, or a resume pass and its
// team's lock, for ever.
func TestSilentServerTimesOut(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		headers bool // the status line and headers are sent, then nothing
	}{{"no answer", false}, {"body stalls", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			var conns atomic.Int32
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					conns.Add(1)
					t.Cleanup(func() { c.Close() })
					if tc.headers {
						go func() {
							bufio.NewReader(c).ReadString('\n')
							io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
						}()
					}
				}
			}()
			t.Cleanup(func() { ln.Close() })
			f := newFixture(t, github.Options{BaseURL: "http://" + ln.Addr().String(), Timeout: 200 * time.Millisecond})
			// within fails the test, where a client without a timeout
			// would hang it.
			within := func(what string, call func() error) {
				t.Helper()
				done := make(chan error, 1)
				go func() { done <- call() }()
				select {
				case err := <-done:
					if !errors.Is(err, github.ErrUnavailable) {
						t.Fatalf("%s: %v, want ErrUnavailable", what, err)
					}
				case <-time.After(time.Minute):
					t.Fatalf("%s still waiting after a minute on a server that never answers", what)
				}
			}
			within("CreateComment", func() error { _, err := f.client.CreateComment(ctx, ref, "question"); return err })
			if n := conns.Load(); n != 1 {
				t.Errorf("the POST was tried on %d connections, want 1", n)
			}
			within("Viewer", func() error { _, err := f.client.Viewer(ctx); return err })
		})
	}
}

// TestBadBaseURLKeepsItsSecrets: a base URL refused for the credentials in
// it (user info, or a query such as the old ?access_token=) is not quoted
// back with them, nor is one that does not parse: the error is printed,
// and ask records it on the ask in the mailbox (post_error).
func TestBadBaseURLKeepsItsSecrets(t *testing.T) {
	for _, u := range []string{
		"https://x-access-token:ghp_secret1@api.github.com",
		"https://ghp_secret1@ghe.example.com/api/v3",
		"https://api.github.com/?access_token=ghp_secret1",
		"https://api.github.com/#ghp_secret1",
		"https://x:ghp_secret1@[::1/api",
		"https://x:ghp_secret1@api.github.com:port/",
		"ftp://x:ghp_secret1@api.github.com",
		"ghp_secret1@api.github.com",
	} {
		_, err := github.New(github.Options{BaseURL: u, Token: "t"})
		if err == nil {
			t.Errorf("base %q accepted", u)
			continue
		}
		if strings.Contains(err.Error(), "ghp_secret1") {
			t.Errorf("base %q: error %q shows the secret", u, err)
		}
	}
}
