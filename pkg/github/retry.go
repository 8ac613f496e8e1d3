package github

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// The retry policy. Every request the Client makes goes through one
// go-retryablehttp client configured here; no call site loops on its own.
//
// What is retried:
//   - network errors (per go-retryablehttp's DefaultRetryPolicy, which gives up
//     at once on TLS certificate, bad scheme and redirect-loop errors);
//   - 5xx responses other than 501 Not Implemented;
//   - 429 Too Many Requests;
//   - 403 Forbidden when it is a rate limit: X-RateLimit-Remaining: 0, a
//     Retry-After header, or a message saying it is a secondary rate limit
//     (GitHub documents such a 403 with neither header). A plain 403 (no
//     permission) is not retried.
//
// Non-idempotent requests (POST, PATCH) are retried only when the server
// provably answered without acting or the request never left this machine:
// 429, a rate-limited 403, and errors dialing the connection (connection
// refused, DNS failure). A 5xx, or a connection reset, timeout or EOF after
// the request was written, is NOT retried for them: GitHub, or a proxy in
// front of it that answered 502 after GitHub acted, may have created the
// comment, and a duplicate comment is worse than a failed ask. The failure
// is returned; the next ask or resume pass finds a comment that was made by
// the hidden marker in it before posting again.
//
// Each attempt may take Options.Timeout, from sending the request to the end
// of the response's body: a server that accepts the connection and never
// answers fails the attempt, where it would hold ask, or a resume pass and
// its team's lock, for ever.
//
// How long to wait before retry n (1-based):
//   - the Retry-After header (seconds or HTTP date) when present;
//   - else, for a rate limit with X-RateLimit-Remaining: 0, until
//     X-RateLimit-Reset (unix seconds) plus one second;
//   - a secondary rate limit that names no wait is given one of a minute
//     (markSecondaryLimit);
//   - else exponential backoff with jitter: a random duration in
//     [d/2, d] where d = 1s·2^(n-1), capped at 30s or Options.MaxWait,
//     whichever is shorter.
//
// A wait the server asks for that is longer than Options.MaxWait is not
// waited: the response is handed back at once and becomes an APIError
// matching ErrRateLimited (or ErrUnavailable for a 5xx) that carries
// RetryAfter and Reset.
//
// go-retryablehttp does the waiting, with a timer that ends early when the
// request's context does; the policy's Backoff says how long. Backoff cannot
// turn a retry down, so it is CheckRetry that refuses a server's wait beyond
// MaxWait. go-retryablehttp does not tell CheckRetry the method of a request
// that failed without a response, so the transport puts it in the request's
// context.

const (
	defaultMaxRetries = 3
	defaultMaxWait    = 60 * time.Second
	defaultTimeout    = 30 * time.Second
	// secondaryWait is the wait GitHub asks for after a secondary rate
	// limit that names none.
	secondaryWait = time.Minute
	backoffBase   = time.Second
	backoffCap    = 30 * time.Second
	// resetMargin is added to a wait computed from X-RateLimit-Reset, whose
	// resolution is one second.
	resetMargin = time.Second
)

// testOnlyRetryWait, set only by tests, is handed each wait the policy chooses
// and returns the one go-retryablehttp really waits, so tests can check waits
// of seconds without spending them.
var testOnlyRetryWait func(time.Duration) time.Duration

type retryPolicy struct {
	maxRetries int
	maxWait    time.Duration
	timeout    time.Duration // of each attempt
	now        func() time.Time
	jitter     func(n int64) int64 // random in [0, n)
}

func newRetryPolicy(o Options) *retryPolicy {
	p := &retryPolicy{
		maxRetries: o.MaxRetries,
		maxWait:    o.MaxWait,
		timeout:    o.Timeout,
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
	if p.timeout <= 0 {
		p.timeout = defaultTimeout
	}
	return p
}

type methodKey struct{}

// transport wraps base in the retry policy.
func (p *retryPolicy) transport(base http.RoundTripper) http.RoundTripper {
	rc := &retryablehttp.Client{
		HTTPClient:   &http.Client{Transport: base, Timeout: p.timeout},
		Logger:       nil, // silent: errors are returned, not logged
		RetryMax:     p.maxRetries,
		CheckRetry:   p.checkRetry,
		Backoff:      p.retryWait,
		ErrorHandler: errorHandler,
	}
	return &methodTransport{next: &retryablehttp.RoundTripper{Client: rc}}
}

// methodTransport puts the request method where checkRetry can find it.
type methodTransport struct {
	next http.RoundTripper
}

func (t *methodTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return t.next.RoundTrip(req.WithContext(context.WithValue(req.Context(), methodKey{}, req.Method)))
}

// checkRetry decides after each attempt whether to try again; retryWait
// decides how long to wait first.
func (p *retryPolicy) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if err != nil {
		// A request without a method in its context did not come through
		// methodTransport; it is not assumed to be safe to repeat.
		method, _ := ctx.Value(methodKey{}).(string)
		if !idempotent(method) && !neverSent(err) {
			return false, nil
		}
		retry, _ := retryablehttp.DefaultRetryPolicy(ctx, nil, err)
		return retry, nil
	}
	markSecondaryLimit(resp)
	if !retryableStatus(resp) {
		return false, nil
	}
	if method, _ := ctx.Value(methodKey{}).(string); !idempotent(method) && !isRateLimited(resp.StatusCode, resp.Header) {
		return false, nil // a 5xx: the write may have happened
	}
	if d, ok := p.serverWait(resp); ok && d > p.maxWait {
		return false, nil
	}
	return true, nil
}

// retryWait is go-retryablehttp's Backoff: the wait before retry attemptNum+1
// (attemptNum counts from 0), after resp or, when resp is nil, after an error.
// The policy keeps its own bounds, so go-retryablehttp's min and max go unused.
func (p *retryPolicy) retryWait(_, _ time.Duration, attemptNum int, resp *http.Response) time.Duration {
	d, ok := p.serverWait(resp)
	if !ok {
		d = p.backoff(attemptNum + 1)
	}
	if testOnlyRetryWait != nil {
		return testOnlyRetryWait(d)
	}
	return d
}

func retryableStatus(resp *http.Response) bool {
	status := resp.StatusCode
	return isRateLimited(status, resp.Header) || status >= 500 && status != http.StatusNotImplemented
}

// markSecondaryLimit gives a secondary rate limit that names no wait the
// Retry-After GitHub's docs give it ("wait for at least one minute before
// retrying"), so that it is waited out, and reported, as any rate limit
// is. The body is read (and put back whole) only for a 403 or 429 with no
// rate-limit header.
func markSecondaryLimit(resp *http.Response) {
	if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusTooManyRequests ||
		resp.Header.Get("Retry-After") != "" || resp.Header.Get("X-RateLimit-Remaining") == "0" {
		return
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b), resp.Body), resp.Body}
	if secondaryLimit(b) {
		resp.Header.Set("Retry-After", strconv.Itoa(int(secondaryWait/time.Second)))
	}
}

// serverWait is the wait resp asks for, if there is one and it asks.
func (p *retryPolicy) serverWait(resp *http.Response) (time.Duration, bool) {
	if resp == nil {
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
	return 0, false
}

// backoff is exponential backoff with jitter for retry number attempt
// (1-based). Unlike a server's wait, one of our own choosing says nothing
// about how long the server will be away, so beyond maxWait it is shortened
// rather than given up on.
func (p *retryPolicy) backoff(attempt int) time.Duration {
	limit := min(backoffCap, p.maxWait)
	d := backoffBase
	for i := 1; i < attempt && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	half := d / 2
	return half + time.Duration(p.jitter(int64(d-half)+1))
}

// gaveUpError carries go-retryablehttp's count of attempts out to Client.do,
// which reports it in a NetworkError.
type gaveUpError struct {
	attempts int
	err      error
}

func (e *gaveUpError) Error() string { return e.err.Error() }
func (e *gaveUpError) Unwrap() error { return e.err }

// errorHandler runs when retrying stops without success. An error is passed
// on with the number of attempts; a final HTTP response is handed back so the caller can turn its
// status, headers and body into an APIError.
func errorHandler(resp *http.Response, err error, attempts int) (*http.Response, error) {
	if err != nil {
		if resp != nil {
			resp.Body.Close()
		}
		return nil, &gaveUpError{attempts: attempts, err: err}
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

// isRateLimited: 429, or a 403 with X-RateLimit-Remaining: 0 or
// Retry-After (which markSecondaryLimit gives a secondary rate limit).
func isRateLimited(status int, h http.Header) bool {
	switch status {
	case http.StatusTooManyRequests:
		return true
	case http.StatusForbidden:
		return h.Get("X-RateLimit-Remaining") == "0" || h.Get("Retry-After") != ""
	}
	return false
}

// secondaryLimit reports whether an error body is GitHub's secondary rate
// limit: "You have exceeded a secondary rate limit", or, from older
// servers (GitHub Enterprise), "You have triggered an abuse detection
// mechanism".
func secondaryLimit(body []byte) bool {
	msg := bytes.ToLower(body)
	return bytes.Contains(msg, []byte("secondary rate limit")) || bytes.Contains(msg, []byte("abuse detection"))
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
