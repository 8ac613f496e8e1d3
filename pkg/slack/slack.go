// Package slack is teamkit's Slack channel, on github.com/slack-go/slack:
// the Web API calls that mirror an ask into a channel (auth.test,
// chat.postMessage, conversations.history to never post twice) and read
// its answer as it stands (reactions.get, conversations.replies), and a
// Socket-Mode listener whose events are only doorbells that make resume
// read now.
//
// It knows nothing of asks or who may answer: pkg/escalate decides that.
// Tokens are only ever handed to slack-go, which sends them to the API
// base; no error or log line here carries one.
//
// Public: a Go program embedding teamkit may import this package.
package slack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	slackgo "github.com/slack-go/slack"
)

// DefaultAPIURL is Slack's Web API base.
const DefaultAPIURL = "https://slack.com/api/"

// MetadataType is the event_type of the message metadata teamkit attaches to
// every question it posts, so that a later post can find an earlier one.
const MetadataType = "teamkit_ask"

// Options configure a Client.
type Options struct {
	// BotToken (xoxb-…) posts and reads the channel; AppToken (xapp-…,
	// with connections:write) opens Socket-Mode connections. Either may be
	// empty when its side is not used.
	BotToken, AppToken string
	// APIURL is the Web API base ("" for DefaultAPIURL).
	APIURL string
	// HTTPClient is the transport (nil: a fresh one).
	HTTPClient *http.Client
}

// Client talks to one Slack workspace.
type Client struct {
	api  *slackgo.Client // the bot token's calls, with the retry policy
	app  *slackgo.Client // Socket Mode: its reconnect loop is the only retry
	base string

	// until[method] is when Slack's last 429 for method ends: until then
	// a call fails at once with *RateLimitedError instead of asking again
	// (and being limited longer).
	mu    sync.Mutex
	until map[string]time.Time
}

// ErrNoToken: the side asked for has no token.
var ErrNoToken = errors.New("no Slack token")

// New makes a client. The API URL must be http(s); it gets a trailing slash,
// which slack-go needs.
func New(o Options) (*Client, error) {
	base := o.APIURL
	if base == "" {
		base = DefaultAPIURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("TEAMKIT_SLACK_API_URL %q is not an http(s) URL", base)
	}
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	quiet := log.New(io.Discard, "", 0)
	common := []slackgo.Option{slackgo.OptionAPIURL(base), slackgo.OptionHTTPClient(hc), slackgo.OptionLog(quiet)}
	c := &Client{base: base, until: map[string]time.Time{}}
	c.api = slackgo.New(o.BotToken, append(common, slackgo.OptionRetryConfig(retryConfig()))...)
	c.app = slackgo.New(o.BotToken, append(common, slackgo.OptionAppLevelToken(o.AppToken))...)
	return c, nil
}

// channelID is a conversation ID: C… (public), G… (private, older), D… (a DM).
var channelID = regexp.MustCompile(`^[CGD][A-Z0-9]{2,30}$`)

// CheckChannel accepts a channel ID. A name will not do: chat.postMessage
// takes one, but conversations.history (finding an earlier post) and the
// events (which name the channel by ID) do not.
func CheckChannel(ch string) error {
	if !channelID.MatchString(ch) {
		return fmt.Errorf("TEAMKIT_SLACK_CHANNEL %q is not a channel ID (C…, at the bottom of the channel's details)", ch)
	}
	return nil
}

// BaseURL is the API base in use.
func (c *Client) BaseURL() string { return c.base }

// Identity is who the bot token is (auth.test).
type Identity struct {
	UserID, BotID, TeamID string
}

// Identity calls auth.test.
func (c *Client) Identity(ctx context.Context) (Identity, error) {
	var r *slackgo.AuthTestResponse
	err := c.do("auth.test", func() (err error) { r, err = c.api.AuthTestContext(ctx); return err })
	if err != nil {
		return Identity{}, err
	}
	return Identity{UserID: r.UserID, BotID: r.BotID, TeamID: r.TeamID}, nil
}

// Meta is the machine-readable part of a posted question.
type Meta struct {
	AskID int64
	Team  string
	Agent string
	Run   string
}

func (m Meta) metadata() slackgo.SlackMetadata {
	return slackgo.SlackMetadata{EventType: MetadataType, EventPayload: map[string]any{
		"ask_id": strconv.FormatInt(m.AskID, 10), "team": m.Team, "agent": m.Agent, "run": m.Run,
	}}
}

func (m Meta) matches(md slackgo.SlackMetadata) bool {
	if md.EventType != MetadataType {
		return false
	}
	p := md.EventPayload
	s := func(k string) string { v, _ := p[k].(string); return v }
	return s("ask_id") == strconv.FormatInt(m.AskID, 10) && s("team") == m.Team && s("agent") == m.Agent && s("run") == m.Run
}

// Posted is a message in a channel.
type Posted struct {
	Channel string // the channel ID Slack answered with
	TS      string
}

// Post sends text (Slack mrkdwn, already escaped by the caller) to channel
// with chat.postMessage, with m as its metadata. Links and media are not
// unfurled: the question is the agent's text, and must not fetch URLs.
func (c *Client) Post(ctx context.Context, channel, text string, m Meta) (Posted, error) {
	var ch, ts string
	err := c.do("chat.postMessage", func() (err error) {
		ch, ts, err = c.api.PostMessageContext(ctx, channel,
			slackgo.MsgOptionText(text, false),
			slackgo.MsgOptionMetadata(m.metadata()),
			slackgo.MsgOptionDisableLinkUnfurl(),
			slackgo.MsgOptionDisableMediaUnfurl(),
		)
		return err
	})
	if err != nil {
		return Posted{}, err
	}
	return Posted{Channel: ch, TS: ts}, nil
}

// FindPosted looks in channel's history since since for a message the bot
// botID posted with metadata m: an earlier Post may have reached Slack
// even though it reported a failure. History is listed newest first, so
// it reads every page back to since: stopping short would miss an earlier
// post in a busy channel, and the caller would post the question again.
func (c *Client) FindPosted(ctx context.Context, channel, botID string, since time.Time, m Meta) (Posted, bool, error) {
	p := &slackgo.GetConversationHistoryParameters{ChannelID: channel, Limit: 200, IncludeAllMetadata: true}
	if !since.IsZero() {
		p.Oldest = fmt.Sprintf("%d.000000", since.Unix())
	}
	for {
		var r *slackgo.GetConversationHistoryResponse
		err := c.do("conversations.history", func() (err error) { r, err = c.api.GetConversationHistoryContext(ctx, p); return err })
		if err != nil {
			return Posted{}, false, err
		}
		for _, msg := range r.Messages {
			if msg.BotID != "" && msg.BotID == botID && m.matches(msg.Metadata) {
				return Posted{Channel: channel, TS: msg.Timestamp}, true, nil
			}
		}
		if !r.HasMore || r.ResponseMetaData.NextCursor == "" {
			break
		}
		p.Cursor = r.ResponseMetaData.NextCursor
	}
	return Posted{}, false, nil
}

// Reaction is one emoji on a message and everyone who added it, as it
// stands.
type Reaction struct {
	Name  string // e.g. "white_check_mark", "+1::skin-tone-3"
	Users []string
}

// Reactions reads the reactions on message (channel, ts) as they stand,
// with reactions.get and full=true (without it Slack may list only some
// of the people behind a reaction).
func (c *Client) Reactions(ctx context.Context, channel, ts string) ([]Reaction, error) {
	var item slackgo.ReactedItem
	err := c.do("reactions.get", func() (err error) {
		item, err = c.api.GetReactionsContext(ctx, slackgo.ItemRef{Channel: channel, Timestamp: ts}, slackgo.GetReactionsParameters{Full: true})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]Reaction, 0, len(item.Reactions))
	for _, r := range item.Reactions {
		out = append(out, Reaction{Name: r.Name, Users: r.Users})
	}
	return out, nil
}

// Reply is a message in a thread as it stands: an edited reply has its
// new text, a deleted one is not listed at all.
type Reply struct {
	TS      string
	User    string
	BotID   string // set when a bot (teamkit included) posted it
	SubType string // "" for a person's plain reply, "thread_broadcast", …
	Text    string
}

// MaxReplyPages bounds the conversations.replies pages read for one thread
// (of repliesPageSize each).
const (
	MaxReplyPages   = 5
	repliesPageSize = 200
)

// Replies reads the replies in the thread of (channel, ts), oldest first,
// without the parent, with conversations.replies. It stops at the first
// reply for which stop returns true (the answer: later pages are not
// read), or after MaxReplyPages pages.
func (c *Client) Replies(ctx context.Context, channel, ts string, stop func(Reply) bool) ([]Reply, error) {
	p := &slackgo.GetConversationRepliesParameters{ChannelID: channel, Timestamp: ts, Limit: repliesPageSize}
	var out []Reply
	for page := 0; page < MaxReplyPages; page++ {
		var msgs []slackgo.Message
		var more bool
		var next string
		err := c.do("conversations.replies", func() (err error) {
			msgs, more, next, err = c.api.GetConversationRepliesContext(ctx, p)
			return err
		})
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			if m.Timestamp == ts {
				continue // the parent, listed first on every page
			}
			r := Reply{TS: m.Timestamp, User: m.User, BotID: m.BotID, SubType: m.SubType, Text: m.Text}
			out = append(out, r)
			if stop != nil && stop(r) {
				return out, nil
			}
		}
		if !more || next == "" {
			break
		}
		p.Cursor = next
	}
	return out, nil
}

// RateLimitedError is Slack's 429 for Method, after slack-go's own retries
// (or at once, while an earlier 429's Retry-After lasts).
type RateLimitedError struct {
	Method     string
	RetryAfter time.Duration
}

func (e *RateLimitedError) Error() string {
	return fmt.Sprintf("slack %s: rate limited (retry after %s)", e.Method, e.RetryAfter.Round(time.Second))
}

// do runs one Web API call of method, unless an earlier 429 for it still
// lasts, and remembers how long a new 429 lasts.
func (c *Client) do(method string, call func() error) error {
	c.mu.Lock()
	until := c.until[method]
	c.mu.Unlock()
	if wait := time.Until(until); wait > 0 {
		return &RateLimitedError{Method: method, RetryAfter: wait}
	}
	err := apiError(method, call())
	var rl *RateLimitedError
	if errors.As(err, &rl) {
		c.mu.Lock()
		c.until[method] = time.Now().Add(rl.RetryAfter)
		c.mu.Unlock()
	}
	return err
}

// apiError names the method and says what Slack said, never more (slack-go
// errors carry no token, but a transport error carries the URL, which is
// only the API base and method).
func apiError(method string, err error) error {
	var rl *slackgo.RateLimitedError
	var sc slackgo.StatusCodeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &rl):
		return &RateLimitedError{Method: method, RetryAfter: max(rl.RetryAfter, time.Second)}
	case errors.As(err, &sc):
		return fmt.Errorf("slack %s: HTTP %d", method, sc.Code)
	}
	return fmt.Errorf("slack %s: %w", method, err)
}
