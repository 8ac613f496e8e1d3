package slack

import (
	"net/http"
	"strings"
	"time"

	slackgo "github.com/slack-go/slack"
)

// The Web API's retry policy is slack-go's own (OptionRetryConfig), with its
// built-in handlers: a 429 waits its Retry-After, a 5xx and a failed
// connection back off exponentially with jitter. One exception: a
// chat.postMessage that failed with a 5xx or a broken connection may have
// been posted, so only its 429s (which provably did nothing) are retried: a
// second copy of the question is worse than a warning, and resume finds an
// earlier copy by its metadata before it posts again.
//
// A 429 is waited out only while its Retry-After is at most MaxRateWait: a
// longer one is returned at once (as *RateLimitedError), and the Client
// makes no call of that method until it has passed, so a resume pass is
// never held for minutes by one thread; the next pass reads it.
//
// Socket Mode's reconnects are not retried here: socketmode's own connect
// loop (exponential backoff to 5 minutes, Retry-After on a rate-limited
// apps.connections.open) is the only policy for them.
func retryConfig() slackgo.RetryConfig {
	cfg := slackgo.RetryConfig{
		MaxRetries:         3,
		RetryAfterDuration: 5 * time.Second,
		BackoffInitial:     200 * time.Millisecond,
		BackoffMax:         5 * time.Second,
		BackoffJitter:      100 * time.Millisecond,
	}
	cfg.Handlers = []slackgo.RetryHandler{
		shortWaits{slackgo.NewRateLimitErrorRetryHandler(cfg)},
		notForPosts{slackgo.NewServerErrorRetryHandler(cfg)},
		notForPosts{slackgo.NewConnectionErrorRetryHandler()},
	}
	return cfg
}

// notForPosts is a handler that never retries chat.postMessage.
type notForPosts struct{ slackgo.RetryHandler }

func (h notForPosts) ShouldRetry(st *slackgo.RetryState, req *http.Request, resp *http.Response, err error) (bool, time.Duration) {
	if strings.HasSuffix(req.URL.Path, "/chat.postMessage") {
		return false, 0
	}
	return h.RetryHandler.ShouldRetry(st, req, resp, err)
}

// MaxRateWait is the longest Retry-After a call waits out before retrying.
const MaxRateWait = 10 * time.Second

// shortWaits retries only what its handler would retry within MaxRateWait.
type shortWaits struct{ slackgo.RetryHandler }

func (h shortWaits) ShouldRetry(st *slackgo.RetryState, req *http.Request, resp *http.Response, err error) (bool, time.Duration) {
	ok, d := h.RetryHandler.ShouldRetry(st, req, resp, err)
	if ok && d > MaxRateWait {
		return false, 0
	}
	return ok, d
}
