package github

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func testPolicy() *retryPolicy {
	p := newRetryPolicy(Options{})
	p.now = func() time.Time { return time.Unix(1_700_000_000, 0) }
	return p
}

func resp(status int, kv ...string) *http.Response {
	return respBody(status, "", kv...)
}

func respBody(status int, body string, kv ...string) *http.Response {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader(body))}
}

// secondary is GitHub's secondary rate limit, as its docs show the body.
const secondary = `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}`

func TestCheckRetryDecisions(t *testing.T) {
	p := testPolicy()
	now := p.now()
	dialErr := &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	resetErr := &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}}
	dnsErr := &url.Error{Op: "Get", URL: "http://x", Err: &net.DNSError{Err: "no such host", Name: "x"}}
	schemeErr := &url.Error{Op: "Get", URL: "gopher://x", Err: errors.New("unsupported protocol scheme \"gopher\"")}
	cases := []struct {
		name   string
		method string
		resp   *http.Response
		err    error
		retry  bool
		wait   time.Duration // exact when > 0; backoff range when -1
	}{
		{"200", "GET", resp(200), nil, false, 0},
		{"304", "GET", resp(304), nil, false, 0},
		{"400", "GET", resp(400), nil, false, 0},
		{"401", "GET", resp(401), nil, false, 0},
		{"404", "GET", resp(404), nil, false, 0},
		{"422", "POST", resp(422), nil, false, 0},
		{"plain 403", "GET", resp(403, "X-RateLimit-Remaining", "12"), nil, false, 0},
		{"501", "GET", resp(501), nil, false, 0},
		{"500", "GET", resp(500), nil, true, -1},
		{"502 POST (the write may have happened)", "POST", resp(502), nil, false, 0},
		{"500 PATCH", "PATCH", resp(500), nil, false, 0},
		{"403 secondary, no headers", "GET", respBody(403, secondary), nil, true, time.Minute},
		{"403 secondary, no headers, POST", "POST", respBody(403, secondary), nil, true, time.Minute},
		{"429 secondary, no headers", "GET", respBody(429, secondary), nil, true, time.Minute},
		{"403 abuse detection (older servers)", "GET", respBody(403, `{"message":"You have triggered an abuse detection mechanism."}`), nil, true, time.Minute},
		{"403 secondary, Retry-After", "GET", respBody(403, secondary, "Retry-After", "7"), nil, true, 7 * time.Second},
		{"403 no permission", "POST", respBody(403, `{"message":"Resource not accessible by integration"}`), nil, false, 0},
		{"503 Retry-After", "GET", resp(503, "Retry-After", "5"), nil, true, 5 * time.Second},
		{"429", "GET", resp(429), nil, true, -1},
		{"429 Retry-After", "POST", resp(429, "Retry-After", "2"), nil, true, 2 * time.Second},
		{"429 Retry-After date", "GET", resp(429, "Retry-After", now.Add(9*time.Second).UTC().Format(http.TimeFormat)), nil, true, 9 * time.Second},
		{"403 Retry-After", "GET", resp(403, "Retry-After", "3"), nil, true, 3 * time.Second},
		{"403 reset soon", "POST", resp(403, "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", strconv.FormatInt(now.Unix()+10, 10)), nil, true, 11 * time.Second},
		{"403 reset past", "GET", resp(403, "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", strconv.FormatInt(now.Unix()-10, 10)), nil, true, time.Second},
		{"403 reset far", "GET", resp(403, "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", strconv.FormatInt(now.Unix()+3600, 10)), nil, false, 0},
		{"429 Retry-After too long", "GET", resp(429, "Retry-After", "61"), nil, false, 0},
		{"403 remaining 0 no reset", "GET", resp(403, "X-RateLimit-Remaining", "0"), nil, true, -1},
		{"GET dial error", "GET", nil, dialErr, true, -1},
		{"GET reset", "GET", nil, resetErr, true, -1},
		{"POST dial error", "POST", nil, dialErr, true, -1},
		{"POST DNS error", "POST", nil, dnsErr, true, -1},
		{"POST reset", "POST", nil, resetErr, false, 0},
		{"PATCH EOF", "PATCH", nil, &url.Error{Op: "Patch", URL: "http://x", Err: io.ErrUnexpectedEOF}, false, 0},
		{"bad scheme", "GET", nil, schemeErr, false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.WithValue(context.Background(), methodKey{}, tc.method)
			retry, err := p.checkRetry(ctx, tc.resp, tc.err)
			if err != nil {
				t.Fatalf("checkRetry error %v", err)
			}
			if retry != tc.retry {
				t.Fatalf("retry = %v, want %v", retry, tc.retry)
			}
			if !retry {
				return
			}
			// go-retryablehttp numbers the first retry 0.
			switch wait := p.retryWait(0, 0, 0, tc.resp); {
			case tc.wait > 0 && wait != tc.wait:
				t.Errorf("wait = %v, want %v", wait, tc.wait)
			case tc.wait < 0 && (wait < 500*time.Millisecond || wait > time.Second):
				t.Errorf("wait = %v, want first backoff in [0.5s, 1s]", wait)
			}
		})
	}
}

// The body a secondary rate limit's 403 was read for is still whole for
// the caller, which turns it into an APIError: a rate limit, not a 403 for
// want of permission, with the minute's wait.
func TestSecondaryLimitLeavesTheBody(t *testing.T) {
	r := respBody(403, secondary)
	markSecondaryLimit(r)
	b, err := io.ReadAll(r.Body)
	if err != nil || string(b) != secondary {
		t.Fatalf("body after the look = %q, %v", b, err)
	}
	e := newAPIError("GET", "http://x/user", r.StatusCode, r.Header, b, time.Now())
	if !errors.Is(e, ErrRateLimited) || errors.Is(e, ErrForbidden) || e.RetryAfter != time.Minute {
		t.Fatalf("APIError %v: rate limited %v, forbidden %v, retry after %v", e, errors.Is(e, ErrRateLimited), errors.Is(e, ErrForbidden), e.RetryAfter)
	}
}

func TestCheckRetryCancelled(t *testing.T) {
	p := testPolicy()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if retry, err := p.checkRetry(ctx, resp(500), nil); retry || !errors.Is(err, context.Canceled) {
		t.Errorf("retry %v err %v", retry, err)
	}
}

func TestBackoff(t *testing.T) {
	p := testPolicy()
	for attempt := 1; attempt <= 10; attempt++ {
		d := backoffBase << (attempt - 1)
		if d > backoffCap || d <= 0 {
			d = backoffCap
		}
		seen := map[time.Duration]bool{}
		for i := 0; i < 200; i++ {
			w := p.backoff(attempt)
			if w < d/2 || w > d {
				t.Fatalf("backoff(%d) = %v, want in [%v, %v]", attempt, w, d/2, d)
			}
			seen[w] = true
		}
		if len(seen) < 10 {
			t.Errorf("backoff(%d) has no jitter: %v", attempt, seen)
		}
	}
	p.jitter = func(n int64) int64 { return n - 1 }
	if w := p.backoff(100); w != backoffCap {
		t.Errorf("max backoff = %v", w)
	}
	p.maxWait = 3 * time.Second
	if w := p.backoff(100); w != p.maxWait {
		t.Errorf("backoff with MaxWait 3s = %v", w)
	}
}

func TestPolicyDefaults(t *testing.T) {
	p := newRetryPolicy(Options{})
	if p.maxRetries != 3 || p.maxWait != time.Minute {
		t.Errorf("defaults: %+v", p)
	}
	if p := newRetryPolicy(Options{MaxRetries: -1, MaxWait: time.Second}); p.maxRetries != 0 || p.maxWait != time.Second {
		t.Errorf("explicit: %+v", p)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	for in, want := range map[string]time.Duration{
		"0": 0, "2": 2 * time.Second, " 7 ": 7 * time.Second,
		now.Add(30 * time.Second).UTC().Format(http.TimeFormat):  30 * time.Second,
		now.Add(-30 * time.Second).UTC().Format(http.TimeFormat): 0,
	} {
		if got, ok := parseRetryAfter(in, now); !ok || got != want {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "-1", "soon", "1.5", "99999999999999"} {
		if got, ok := parseRetryAfter(in, now); ok {
			t.Errorf("parseRetryAfter(%q) = %v, want not ok", in, got)
		}
	}
	if got, ok := parseReset("1700000000"); !ok || !got.Equal(now) {
		t.Errorf("parseReset = %v %v", got, ok)
	}
	for _, in := range []string{"", "0", "x", "-5"} {
		if _, ok := parseReset(in); ok {
			t.Errorf("parseReset(%q) ok", in)
		}
	}
}

func TestAPIErrorMatching(t *testing.T) {
	sentinels := []error{ErrUnauthorized, ErrForbidden, ErrNotFound, ErrRateLimited, ErrUnavailable, ErrInvalid}
	cases := []struct {
		status int
		hdr    []string
		want   error
	}{
		{401, nil, ErrUnauthorized},
		{403, nil, ErrForbidden},
		{403, []string{"X-RateLimit-Remaining", "0"}, ErrRateLimited},
		{403, []string{"Retry-After", "60"}, ErrRateLimited},
		{404, nil, ErrNotFound},
		{422, nil, ErrInvalid},
		{429, nil, ErrRateLimited},
		{500, nil, ErrUnavailable},
		{503, nil, ErrUnavailable},
		{400, nil, nil},
	}
	for _, tc := range cases {
		r := resp(tc.status, tc.hdr...)
		e := newAPIError("GET", "https://api.github.com/user", tc.status, r.Header, nil, time.Now())
		wrapped := fmt.Errorf("context: %w", e)
		for _, s := range sentinels {
			if got := errors.Is(wrapped, s); got != (s == tc.want) {
				t.Errorf("%d %v: errors.Is(%v) = %v", tc.status, tc.hdr, s, got)
			}
		}
	}
}

func TestAPIErrorMessage(t *testing.T) {
	body := []byte(`{"message":"Validation Failed","errors":[{"resource":"IssueComment","code":"missing_field","field":"body"},{"message":"body is too long\n(maximum is 65536 characters)"}],"documentation_url":"x"}`)
	e := newAPIError("POST", "https://api.github.com/repos/o/r/issues/1/comments?x=1", 422, http.Header{}, body, time.Now())
	want := "github: 422 Unprocessable Entity (POST /repos/o/r/issues/1/comments): Validation Failed (IssueComment body missing_field; body is too long (maximum is 65536 characters))"
	if e.Error() != want {
		t.Errorf("got  %q\nwant %q", e.Error(), want)
	}
	e = newAPIError("GET", "http://h/x", 502, http.Header{}, []byte("<html>\n<b>Bad\tgateway</b>\x1b[31m\n</html>"), time.Now())
	if got := e.Error(); strings.ContainsAny(got, "\n\t\x1b") || !strings.Contains(got, "502 Bad Gateway (GET /x)") {
		t.Errorf("non-JSON body: %q", got)
	}
	e = newAPIError("GET", "http://h/x", 429, http.Header{"Retry-After": {"30"}}, nil, time.Now())
	if !strings.HasSuffix(e.Error(), "retry after 30s") || e.RetryAfter != 30*time.Second {
		t.Errorf("429: %q", e.Error())
	}
	long := strings.Repeat("x", 1000)
	if got := oneLine(long, 300); len([]rune(got)) != 301 {
		t.Errorf("oneLine cap: %d runes", len([]rune(got)))
	}
	ne := &NetworkError{Method: "GET", URL: "https://api.github.com/user", Attempts: 4, Err: errors.New("dial tcp: connection refused")}
	if got := ne.Error(); got != "github: network unreachable: cannot reach api.github.com (GET /user, gave up after 4 attempt(s)): dial tcp: connection refused" {
		t.Errorf("NetworkError = %q", got)
	}
	if !errors.Is(ne, ErrUnavailable) {
		t.Error("NetworkError is not ErrUnavailable")
	}
	// A connection the server closed mid-response is not a network that
	// is down.
	for _, cut := range []error{io.EOF, io.ErrUnexpectedEOF, &url.Error{Op: "Get", URL: "https://api.github.com/user", Err: io.EOF}} {
		ne = &NetworkError{Method: "GET", URL: "https://api.github.com/user", Attempts: 4, Err: cut}
		if got := ne.Error(); !strings.HasPrefix(got, "github: connection dropped: api.github.com closed it before a whole response (GET /user, gave up after 4 attempt(s)): ") {
			t.Errorf("NetworkError of %v = %q", cut, got)
		}
	}
}

func TestNextLink(t *testing.T) {
	cases := map[string]string{
		`<https://api.github.com/x?page=2&per_page=100>; rel="next", <https://api.github.com/x?page=5>; rel="last"`: "https://api.github.com/x?page=2&per_page=100",
		`<https://a/x?page=1>; rel="prev", <https://a/x?page=3>; rel="next"`:                                        "https://a/x?page=3",
		`<https://a/x?q=a,b&page=3>; rel="next"`:                                                                    "https://a/x?q=a,b&page=3",
		`<https://a/x?page=3>; REL=next`:                                                                            "https://a/x?page=3",
		`<https://a/x?page=3>; rel="next last"`:                                                                     "https://a/x?page=3",
		`<https://a/x?page=1>; rel="first"`:                                                                         "",
		``:                                                                                                          "",
		`garbage`:                                                                                                   "",
		`<unterminated; rel="next"`:                                                                                 "",
	}
	for in, want := range cases {
		if got := nextLink([]string{in}); got != want {
			t.Errorf("nextLink(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestGHHost(t *testing.T) {
	for in, want := range map[string]string{
		"https://api.github.com":         "github.com",
		"https://API.GitHub.com/":        "github.com",
		"https://api.acme.ghe.com":       "acme.ghe.com",
		"https://ghe.example.com/api/v3": "ghe.example.com",
		"http://127.0.0.1:8080":          "127.0.0.1",
		"http://[::1]:9":                 "::1",
	} {
		u, err := parseBaseURL(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := ghHost(u); got != want {
			t.Errorf("ghHost(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestNeverSent(t *testing.T) {
	if !neverSent(&url.Error{Err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}}) {
		t.Error("dial error not recognised")
	}
	if neverSent(&url.Error{Err: &net.OpError{Op: "read", Err: syscall.ECONNRESET}}) || neverSent(io.EOF) {
		t.Error("post-send error treated as never sent")
	}
}
