package github

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/teamkit/teamkit/pkg/wait"
)

// The retry policy. Every request the Client makes goes through one
// go-retryablehttp client configured here; no call site loops on its own.
//
// What is retried:
//   - network errors (per go-retryablehttp's DefaultRetryPolicy, which gives up
//     at once on TLS certificate, bad scheme and redirect-loop errors);
//   - 5xx responses other than 501 Not Implemented;
//   - 429 Too Many Requests;
//   - 403 Forbidden when it is a rate limit: X-RateLimit-Remaining: 0 or a
//     Retry-After header. A plain 403 (no permission) is not retried.
//
// Non-idempotent requests (POST, PATCH) are retried only when the server
// provably answered without acting or the request never left this machine:
// 5xx, 429, a rate-limited 403, and errors dialing the connection (connection
// refused, DNS failure). A connection reset, timeout or EOF after the request
// was written is NOT retried for them: GitHub may have created the comment, and
// a duplicate comment is worse than a failed ask. A 5xx on a POST can in rare
// cases follow a write that did happen; teamkit's ask de-duplicates by the
// hidden marker it puts in every comment, so that residual risk is accepted.
//
// How long to wait before retry n (1-based):
//   - the Retry-After header (seconds or HTTP date) when present;
//   - else, for a rate limit with X-RateLimit-Remaining: 0, until
//     X-RateLimit-Reset (unix seconds) plus one second;
//   - else exponential backoff with jitter: a random duration in
//     [d/2, d] where d = 1s·2^(n-1), capped at 30s.
//
// A wait longer than Options.MaxWait is not waited: the response is handed
// back at once and becomes an APIError matching ErrRateLimited (or
// ErrUnavailable for a 5xx) that carries RetryAfter and Reset.
//
// go-retryablehttp sleeps with its own timer between attempts; to make the
// wait injectable (Options.Sleep) the policy's Backoff returns zero and the
// real wait happens in PrepareRetry, which sees the request's context.

const (
	defaultMaxRetries = 3
	defaultMaxWait    = 60 * time.Second
	backoffBase       = time.Second
	backoffCap        = 30 * time.Second
	// resetMargin is added to a wait computed from X-RateLimit-Reset, whose
	// resolution is one second.
	resetMargin = time.Second
)

type retryPolicy struct {
	maxRetries int
	maxWait    time.Duration
	sleep      func(context.Context, time.Duration) error
	now        func() time.Time
	jitter     func(n int64) int64 // random in [0, n)
}

func newRetryPolicy(o Options) *retryPolicy {
	p := &retryPolicy{
		maxRetries: o.MaxRetries,
		maxWait:    o.MaxWait,
		sleep:      o.Sleep,
		now:        time.Now,
		jitter:     rand.Int64N,
	}
	switch {
	case p.maxRetries == 0:
		p.maxRetries = defaultMaxRetries
	case p.maxRetries < 0:
		p.maxRetries = 0
	}
	if p.maxWait <= 0 {
		p.maxWait = defaultMaxWait
	}
	if p.sleep == nil {
		p.sleep = wait.Sleep
	}
	return p
}

// retryState is the per-call bookkeeping the policy's hooks share through the
// request context (go-retryablehttp's hooks see the context, not each other).
type retryState struct {
	method   string
	attempts int
	wait     time.Duration
}

type retryStateKey struct{}

func withRetryState(ctx context.Context) (context.Context, *retryState) {
	st := &retryState{}
	return context.WithValue(ctx, retryStateKey{}, st), st
}

func retryStateFrom(ctx context.Context) *retryState {
	st, _ := ctx.Value(retryStateKey{}).(*retryState)
	return st
}

// transport wraps base in the retry policy.
func (p *retryPolicy) transport(base http.RoundTripper) http.RoundTripper {
	rc := &retryablehttp.Client{
		HTTPClient:   &http.Client{Transport: base},
		Logger:       nil, // silent: errors are returned, not logged
		RetryWaitMin: backoffBase,
		RetryWaitMax: backoffCap,
		RetryMax:     p.maxRetries,
		CheckRetry:   p.checkRetry,
		Backoff:      func(time.Duration, time.Duration, int, *http.Response) time.Duration { return 0 },
		PrepareRetry: p.prepareRetry,
		ErrorHandler: errorHandler,
	}
	return &retryTransport{next: &retryablehttp.RoundTripper{Client: rc}}
}

// retryTransport makes sure every request carries a retryState.
type retryTransport struct {
	next http.RoundTripper
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	st := retryStateFrom(req.Context())
	if st == nil {
		var ctx context.Context
		ctx, st = withRetryState(req.Context())
		req = req.WithContext(ctx)
	}
	st.method = req.Method
	return t.next.RoundTrip(req)
}

// checkRetry decides after each attempt whether to try again and, if so,
// records how long to wait first.
func (p *retryPolicy) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	st := retryStateFrom(ctx)
	if st == nil {
		st = &retryState{method: http.MethodGet}
	}
	st.attempts++
	st.wait = 0
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if err != nil {
		if !idempotent(st.method) && !neverSent(err) {
			return false, nil
		}
		if retry, _ := retryablehttp.DefaultRetryPolicy(ctx, nil, err); !retry {
			return false, nil
		}
		st.wait = p.backoff(st.attempts)
		return true, nil
	}
	wait, retry := p.responseWait(resp, st.attempts)
	if !retry || wait > p.maxWait {
		return false, nil
	}
	st.wait = wait
	return true, nil
}

// responseWait reports whether resp is worth retrying and after how long.
func (p *retryPolicy) responseWait(resp *http.Response, attempt int) (time.Duration, bool) {
	status := resp.StatusCode
	retryable := status == http.StatusTooManyRequests ||
		isRateLimited(status, resp.Header) ||
		status >= 500 && status != http.StatusNotImplemented
	if !retryable {
		return 0, false
	}
	now := p.now()
	if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), now); ok {
		return d, true
	}
	if resp.Header.Get("X-RateLimit-Remaining") == "0" {
		if reset, ok := parseReset(resp.Header.Get("X-RateLimit-Reset")); ok {
			return max(reset.Sub(now), 0) + resetMargin, true
		}
	}
	return p.backoff(attempt), true
}

// backoff is exponential backoff with jitter for retry number attempt (1-based).
func (p *retryPolicy) backoff(attempt int) time.Duration {
	d := backoffBase
	for i := 1; i < attempt && d < backoffCap; i++ {
		d *= 2
	}
	d = min(d, backoffCap)
	half := d / 2
	return half + time.Duration(p.jitter(int64(d-half)+1))
}

// prepareRetry performs the wait checkRetry chose, through the injectable sleep.
func (p *retryPolicy) prepareRetry(req *http.Request) error {
	st := retryStateFrom(req.Context())
	if st == nil || st.wait <= 0 {
		return nil
	}
	return p.sleep(req.Context(), st.wait)
}

// errorHandler runs when retrying stops without success. An error is passed
// through; a final HTTP response is handed back so the caller can turn its
// status, headers and body into an APIError.
func errorHandler(resp *http.Response, err error, _ int) (*http.Response, error) {
	if err != nil {
		if resp != nil {
			resp.Body.Close()
		}
		return nil, err
	}
	if resp == nil {
		return nil, errors.New("no response")
	}
	return resp, nil
}

func idempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// neverSent reports whether err happened before the request could reach the
// server: the connection could not be dialed or the host not resolved.
func neverSent(err error) bool {
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return true
	}
	var opErr *net.OpError
	return errors.As(err, &opErr) && opErr.Op == "dial"
}

// isRateLimited: 429, or a 403 with X-RateLimit-Remaining: 0 or Retry-After.
func isRateLimited(status int, h http.Header) bool {
	switch status {
	case http.StatusTooManyRequests:
		return true
	case http.StatusForbidden:
		return h.Get("X-RateLimit-Remaining") == "0" || h.Get("Retry-After") != ""
	}
	return false
}

// parseRetryAfter parses Retry-After as delay-seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 || secs > int64(365*24*time.Hour/time.Second) {
			return 0, false
		}
		return time.Duration(secs) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// parseReset parses X-RateLimit-Reset (unix seconds).
func parseReset(v string) (time.Time, bool) {
	secs, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || secs <= 0 {
		return time.Time{}, false
	}
	return time.Unix(secs, 0).UTC(), true
}
