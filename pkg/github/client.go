// Package github is the small GitHub REST client that teamkit's ask and resume
// use to post a question on an issue and to read the replies and reactions.
//
// It covers exactly what they need (the viewer's login, an issue, creating a
// comment, listing comments and reactions with conditional requests and
// pagination). Authentication and the standard GitHub headers come from
// go-gh; every request goes through one shared retry policy built on
// go-retryablehttp (see retry.go). Failures are typed: *APIError and
// *NetworkError, matched with errors.Is against the Err* sentinels.
//
// Public: a Go program embedding teamkit may import this package.
package github

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/cli/go-gh/v2/pkg/api"
	"github.com/cli/go-gh/v2/pkg/auth"
)

// DefaultBaseURL is the API base used when neither Options.BaseURL nor
// GITHUB_API_URL is set.
const DefaultBaseURL = "https://api.github.com"

const (
	acceptHeader = "application/vnd.github+json"
	apiVersion   = "2022-11-28"
	// maxBody caps how much of one response is read.
	maxBody = 32 << 20
	// maxPages caps pagination so a misbehaving server cannot loop forever.
	maxPages = 1000
)

// Options configures New. The zero value is usable: it reads GITHUB_API_URL,
// GH_TOKEN / GITHUB_TOKEN / the gh login from the environment.
type Options struct {
	// BaseURL is the API root, e.g. https://api.github.com or
	// https://ghe.example.com/api/v3 or http://127.0.0.1:PORT.
	// Default: GITHUB_API_URL, else DefaultBaseURL.
	BaseURL string
	// Token overrides GH_TOKEN, GITHUB_TOKEN and the stored gh login.
	Token string
	// Getenv reads GITHUB_API_URL, GH_TOKEN and GITHUB_TOKEN; default
	// os.Getenv. The fallback to the stored gh login (go-gh's
	// auth.TokenForHost) reads the process environment and gh's own config.
	Getenv func(string) string
	// Transport is the underlying HTTP transport; default a clone of
	// http.DefaultTransport.
	Transport http.RoundTripper
	// MaxRetries is how many times a failed request is retried; default 3,
	// negative for none.
	MaxRetries int
	// MaxWait is the longest wait before a retry that will be waited; a longer
	// one the server asks for (a rate limit resetting in an hour, say) fails at
	// once, and the backoff between other retries is capped at it. Default 60s.
	MaxWait time.Duration
	// Timeout is how long one attempt may take, from sending the request to
	// the end of the response's body; default 30s.
	Timeout time.Duration
}

// Client is a GitHub REST client. It is safe for concurrent use.
type Client struct {
	base     *url.URL
	host     string
	hc       *http.Client
	now      func() time.Time
	identity string
}

// Identity names the token without revealing it (a hash prefix), for keys
// that must change when the token does: what counts as "the token's own
// comment" depends on whose token it is.
func (c *Client) Identity() string { return c.identity }

// New builds a Client. It fails with an error wrapping ErrNoToken when no
// token can be found, and on a malformed base URL.
func New(o Options) (*Client, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	raw := o.BaseURL
	if raw == "" {
		raw = strings.TrimSpace(getenv("GITHUB_API_URL"))
	}
	if raw == "" {
		raw = DefaultBaseURL
	}
	base, err := parseBaseURL(raw)
	if err != nil {
		return nil, err
	}
	host := ghHost(base)

	token := o.Token
	for _, name := range []string{"GH_TOKEN", "GITHUB_TOKEN"} {
		if token == "" {
			token = strings.TrimSpace(getenv(name))
		}
	}
	if token == "" {
		token, _ = auth.TokenForHost(host)
	}
	if token == "" {
		hint := "gh auth login"
		if host != "github.com" {
			hint = "gh auth login --hostname " + host
		}
		return nil, fmt.Errorf("%w for %s: set GH_TOKEN or run `%s`", ErrNoToken, host, hint)
	}

	transport := o.Transport
	if transport == nil {
		transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	policy := newRetryPolicy(o)
	opts := api.ClientOptions{
		AuthToken: token,
		// go-gh only sends the token to Host, its subdomains, and APIHost.
		Host:         host,
		Transport:    policy.transport(transport),
		LogIgnoreEnv: true, // no GH_DEBUG logging
		EnableCache:  false,
		Headers: map[string]string{
			"Accept":               acceptHeader,
			"X-GitHub-Api-Version": apiVersion,
		},
	}
	// Setting APIHost explicitly keeps go-gh from consulting gh's config for
	// one; it must be a bare hostname (an IPv6 literal is not, and is covered
	// by Host anyway).
	if h := base.Hostname(); !strings.Contains(h, ":") {
		opts.APIHost = h
	}
	hc, err := api.NewHTTPClient(opts)
	if err != nil {
		return nil, fmt.Errorf("github: building HTTP client for %s: %w", base, err)
	}
	return &Client{base: base, host: host, hc: hc, now: time.Now, identity: tokenIdentity(token)}, nil
}

// BaseURL returns the API root the client talks to.
func (c *Client) BaseURL() string { return c.base.String() }

// Host returns the GitHub host the client authenticates for (github.com for
// api.github.com).
func (c *Client) Host() string { return c.host }

// parseBaseURL reads the API base. Its errors never quote raw, whose user
// info, query or fragment may hold a token (https://x-access-token:…@,
// ?access_token=…): they show the URL without them, or none at all.
func parseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // it quotes the URL whole
		}
		var esc url.EscapeError
		if errors.As(err, &esc) {
			err = errors.New("a '%' that starts no escape")
		}
		return nil, fmt.Errorf("github: invalid API base URL: it does not parse (%w)", err)
	}
	shown := *u
	shown.User, shown.RawQuery, shown.ForceQuery, shown.Fragment, shown.RawFragment = nil, "", false, "", ""
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		// Without a scheme and host, what it holds is not told apart.
		return nil, errors.New("github: invalid API base URL: want http(s)://host[/path]")
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("github: invalid API base URL %q: no credentials, query or fragment allowed", shown.String())
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// ghHost maps an API base URL to the host gh stores logins under:
// api.github.com → github.com, api.X → X, anything else → its hostname.
func ghHost(u *url.URL) string {
	h := strings.ToLower(u.Hostname())
	if rest, ok := strings.CutPrefix(h, "api."); ok && rest != "" {
		return rest
	}
	return h
}

// endpoint joins the base URL with path segments (each escaped) and a query.
func (c *Client) endpoint(q url.Values, segments ...string) string {
	u := *c.base
	var b strings.Builder
	b.WriteString(u.Path)
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	u.Path = b.String()
	u.RawPath = ""
	u.RawQuery = q.Encode()
	return u.String()
}

// response is a fully read HTTP response.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do performs one logical request (retried by the policy) and returns the
// response for 2xx and 304; anything else becomes an *APIError, and a request
// that never got a response a *NetworkError (or the context's error).
func (c *Client) do(ctx context.Context, method, rawURL string, body any, header http.Header) (*response, error) {
	var rdr io.Reader
	if body != nil {
		buf, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("github: encoding %s %s request: %w", method, urlPath(rawURL), err)
		}
		rdr = bytes.NewReader(buf)
	}
	req, err := http.NewRequestWithContext(ctx, method, rawURL, rdr)
	if err != nil {
		return nil, fmt.Errorf("github: building %s %s request: %w", method, urlPath(rawURL), err)
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("github: %s %s: %w", method, urlPath(rawURL), ctxErr)
		}
		attempts := 1
		var gaveUp *gaveUpError
		if errors.As(err, &gaveUp) {
			attempts, err = gaveUp.attempts, gaveUp.err
		}
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return nil, &NetworkError{Method: method, URL: rawURL, Attempts: attempts, Err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("github: %s %s: reading response: %w", method, urlPath(rawURL), ctxErr)
		}
		// Getting the response was retried; reading its body is not.
		return nil, &NetworkError{Method: method, URL: rawURL, Attempts: 1,
			Err: fmt.Errorf("reading response: %w", err)}
	}
	if len(data) > maxBody {
		return nil, fmt.Errorf("github: %s %s: response larger than %d bytes", method, urlPath(rawURL), maxBody)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 || resp.StatusCode == http.StatusNotModified {
		return &response{status: resp.StatusCode, header: resp.Header, body: data}, nil
	}
	return nil, newAPIError(method, rawURL, resp.StatusCode, resp.Header, data, c.now())
}

// getJSON GETs rawURL and decodes the body into out.
func (c *Client) getJSON(ctx context.Context, rawURL string, out any) error {
	resp, err := c.do(ctx, http.MethodGet, rawURL, nil, nil)
	if err != nil {
		return err
	}
	return decode(http.MethodGet, rawURL, resp, out)
}

func decode(method, rawURL string, resp *response, out any) error {
	if err := json.Unmarshal(resp.body, out); err != nil {
		return fmt.Errorf("github: %s %s: decoding %d response: %w", method, urlPath(rawURL), resp.status, err)
	}
	return nil
}

func tokenIdentity(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:8])
}
