package github

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Sentinel errors. Every error a Client method returns for an HTTP failure is
// an *APIError (or a *NetworkError) that matches one of these with errors.Is.
var (
	// ErrNoToken: no token in Options, GH_TOKEN, GITHUB_TOKEN or the gh login.
	ErrNoToken = errors.New("github: no token found")
	// ErrUnauthorized: 401, the token is missing, wrong or expired.
	ErrUnauthorized = errors.New("github: unauthorized")
	// ErrForbidden: 403 that is not a rate limit (no permission).
	ErrForbidden = errors.New("github: forbidden")
	// ErrNotFound: 404, the repository or issue does not exist or the token cannot see it.
	ErrNotFound = errors.New("github: not found")
	// ErrRateLimited: 429, or 403 with X-RateLimit-Remaining: 0, Retry-After
	// or a secondary rate limit's message, still limited after retrying or
	// with a wait longer than Options.MaxWait.
	ErrRateLimited = errors.New("github: rate limited")
	// ErrUnavailable: 5xx after retries, or the network is unreachable.
	ErrUnavailable = errors.New("github: unavailable")
	// ErrInvalid: 422, GitHub rejected the request as invalid.
	ErrInvalid = errors.New("github: invalid request")
)

// APIError is a non-success HTTP response from the GitHub API.
type APIError struct {
	Status  int    // HTTP status code
	Message string // GitHub's "message" (plus validation details), one line
	Method  string // request method
	URL     string // request URL
	// RetryAfter is the Retry-After header, when present.
	RetryAfter time.Duration
	// Reset is X-RateLimit-Reset, when present: when the rate limit window resets.
	Reset time.Time
	// RateLimited is true for 429, and for a 403 carrying rate-limit headers
	// or a secondary rate limit's message.
	RateLimited bool
}

// Error renders one plain line, e.g.
// "github: 404 Not Found (GET /repos/o/r/issues/9/comments): Not Found".
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "github: %d %s (%s %s)", e.Status, statusText(e.Status), e.Method, urlPath(e.URL))
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.RateLimited {
		switch {
		case !e.Reset.IsZero():
			fmt.Fprintf(&b, "; rate limit resets at %s", e.Reset.UTC().Format(time.RFC3339))
		case e.RetryAfter > 0:
			fmt.Fprintf(&b, "; retry after %s", e.RetryAfter)
		}
	}
	return b.String()
}

// Is makes errors.Is(err, ErrNotFound) and friends work.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrUnauthorized:
		return e.Status == http.StatusUnauthorized
	case ErrForbidden:
		return e.Status == http.StatusForbidden && !e.RateLimited
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	case ErrRateLimited:
		return e.RateLimited
	case ErrUnavailable:
		return e.Status >= 500
	case ErrInvalid:
		return e.Status == http.StatusUnprocessableEntity
	}
	return false
}

// NetworkError is a request that never got an HTTP response, even after
// retrying: the network or GitHub is unreachable. It matches ErrUnavailable.
type NetworkError struct {
	Method   string
	URL      string
	Attempts int
	Err      error
}

// Error says in plain words what failed: the network was unreachable, or
// the server took the request and closed the connection before a whole
// response (a proxy or GitHub cutting it off, not a network that is down).
func (e *NetworkError) Error() string {
	host := e.URL
	if u, err := url.Parse(e.URL); err == nil && u.Host != "" {
		host = u.Host
	}
	what := "network unreachable: cannot reach " + host
	if errors.Is(e.Err, io.EOF) || errors.Is(e.Err, io.ErrUnexpectedEOF) || errors.Is(e.Err, syscall.ECONNRESET) {
		what = "connection dropped: " + host + " closed it before a whole response"
	}
	return fmt.Sprintf("github: %s (%s %s, gave up after %d attempt(s)): %v",
		what, e.Method, urlPath(e.URL), e.Attempts, e.Err)
}

// Unwrap exposes both ErrUnavailable and the underlying transport error.
func (e *NetworkError) Unwrap() []error { return []error{ErrUnavailable, e.Err} }

// newAPIError builds an APIError from a response's status, headers and body.
func newAPIError(method, rawURL string, status int, h http.Header, body []byte, now time.Time) *APIError {
	e := &APIError{Status: status, Method: method, URL: rawURL, Message: errorMessage(body)}
	if d, ok := parseRetryAfter(h.Get("Retry-After"), now); ok {
		e.RetryAfter = d
	}
	if t, ok := parseReset(h.Get("X-RateLimit-Reset")); ok {
		e.Reset = t
	}
	e.RateLimited = isRateLimited(status, h)
	return e
}

// errorMessage extracts GitHub's error message from a JSON error body, with
// the validation details of a 422, flattened to a single line.
func errorMessage(body []byte) string {
	var payload struct {
		Message string `json:"message"`
		Errors  []struct {
			Resource string `json:"resource"`
			Field    string `json:"field"`
			Code     string `json:"code"`
			Message  string `json:"message"`
		} `json:"errors"`
	}
	msg := ""
	if err := json.Unmarshal(body, &payload); err == nil {
		msg = payload.Message
		var details []string
		for _, d := range payload.Errors {
			switch {
			case d.Message != "":
				details = append(details, d.Message)
			case d.Field != "" || d.Code != "":
				details = append(details, strings.TrimSpace(d.Resource+" "+d.Field+" "+d.Code))
			}
		}
		if len(details) > 0 {
			msg += " (" + strings.Join(details, "; ") + ")"
		}
	} else {
		msg = string(body)
	}
	return oneLine(msg, 300)
}

// oneLine collapses whitespace (newlines included) and caps the length.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "\uFFFD")), " ")
	var b strings.Builder
	n := 0
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			continue
		}
		if n == max {
			b.WriteString("…")
			break
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

func statusText(code int) string {
	if t := http.StatusText(code); t != "" {
		return t
	}
	return "Status"
}

// urlPath returns the path of rawURL (no scheme, host or query), for messages.
func urlPath(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Path == "" {
		return rawURL
	}
	return u.Path
}
