// Package slacktest is a stand-in for Slack, for tests: the Web API methods
// teamkit calls (auth.test, chat.postMessage, conversations.history,
// reactions.get, conversations.replies, apps.connections.open) over HTTP,
// and a Socket-Mode WebSocket endpoint that speaks Slack's envelopes
// (hello, events_api with envelope_id, acks, disconnect).
//
// It keeps the channel's state as Slack does: messages, thread replies and
// the reactions on each. A person's action (React, Unreact, PostReply,
// EditReply, DeleteReply) changes that state and delivers the event Slack
// would; Inject delivers an event that changes nothing (a forged or stale
// one).
//
// It answers as Slack does where it matters: HTTP 200 with {"ok":false,
// "error":"invalid_auth"} for a bad token, not_allowed_token_type for the
// wrong kind of token, channel_not_found, HTTP 429 with Retry-After for a
// rate limit (Fail, or a real per-method budget with Limit), reactions.get
// listing only the first few users of a reaction unless full=true,
// message_not_found and thread_not_found, message metadata only with
// include_all_metadata, ts values of the form "1764000000.000100" (Unix
// seconds and microseconds), and redelivery of every envelope not
// acknowledged when a connection ends (with retry_attempt counted up).
//
// A test acts as people (React, PostReply, …), injects raw events (Inject,
// Raw), reads acks (Acked, Wait) and breaks things (Fail, Limit,
// DropNextAck, Disconnect).
//
// Internal: a test kit; only tests import it, never a shipped binary.
package slacktest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Tokens and identities the server knows until told otherwise.
const (
	BotToken = "xoxb-1-teamkit-test-bot-token"
	AppToken = "xapp-1-A0TEAMKIT-teamkit-test-app-token"
	BotUser  = "U0TEAMKIT"
	BotID    = "B0TEAMKIT"
	TeamID   = "T0TEAMKIT"
	AppID    = "A0TEAMKIT"
	Channel  = "C0QUESTIONS"
	// ChannelName is Channel's name; chat.postMessage takes either.
	ChannelName = "agent-questions"
)

// Message is a message in a channel, or a reply in a thread (ThreadTS set).
type Message struct {
	Channel  string          `json:"channel"`
	TS       string          `json:"ts"`
	Text     string          `json:"text"`
	User     string          `json:"user,omitempty"`
	BotID    string          `json:"bot_id,omitempty"`
	ThreadTS string          `json:"thread_ts,omitempty"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
	Edited   bool            `json:"-"`
}

// reaction is one emoji on a message and who added it, in order.
type reaction struct {
	name  string
	users []string
}

// partialUsers is how many users reactions.get lists per reaction without
// full=true (Slack lists "some"; the count is always whole).
const partialUsers = 3

// Failure makes the next Count calls (-1: until Heal) of Method (all
// methods when empty) fail: with HTTP Status (and Retry-After seconds for a
// 429), or, when Error is set, with HTTP 200 and {"ok":false,"error":Error}.
// With AfterCall the call is carried out first (a message is posted) and
// its answer is then lost to the failure, as when Slack acted but the
// response never arrived whole.
type Failure struct {
	Method     string
	Status     int
	RetryAfter int
	Error      string
	Count      int
	AfterCall  bool
}

// Request is one Web API call as logged.
type Request struct {
	Method string // the API method, e.g. "chat.postMessage"
	Status int
	Error  string // Slack's error code, when ok was false
}

type envelope struct {
	id      string
	payload json.RawMessage
	attempt int
	sent    bool
	acked   bool
}

// Server is the stand-in. Serve it with httptest (NewServer does).
type Server struct {
	mu       sync.Mutex
	srv      *httptest.Server
	messages []Message
	nextTS   int64
	failures []Failure
	requests []Request
	tickets  map[string]bool
	nextID   int
	// reactions["channel/ts"] are the reactions on that message.
	reactions map[string][]reaction
	// limits[method] is a per-minute budget; calls[method] the times of
	// the calls it counted.
	limits map[string]limit
	calls  map[string][]time.Time

	envs        []*envelope
	conns       int // connections that got hello
	conn        *wsConn
	dropNextAck bool
	acks        []string
	changed     chan struct{} // closed and replaced on every change
}

type wsConn struct {
	c    *websocket.Conn
	wmu  sync.Mutex
	done chan struct{}
}

func (w *wsConn) write(v []byte) error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	w.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	return w.c.WriteMessage(websocket.TextMessage, v)
}

// NewServer starts a stand-in on 127.0.0.1; Close it when done.
func NewServer() *Server {
	s := &Server{tickets: map[string]bool{}, changed: make(chan struct{}),
		reactions: map[string][]reaction{}, limits: map[string]limit{}, calls: map[string][]time.Time{}}
	s.srv = httptest.NewServer(s)
	return s
}

// APIURL is the Web API base, for TEAMKIT_SLACK_API_URL.
func (s *Server) APIURL() string { return s.srv.URL + "/api/" }

// Close stops the server and drops every connection.
func (s *Server) Close() {
	s.mu.Lock()
	if s.conn != nil {
		s.conn.c.Close()
	}
	s.mu.Unlock()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// ServeHTTP routes /api/METHOD and the WebSocket at /link/.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasPrefix(r.URL.Path, "/api/"):
		s.api(w, r, strings.TrimPrefix(r.URL.Path, "/api/"))
	case r.URL.Path == "/link/":
		s.socket(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) api(w http.ResponseWriter, r *http.Request, method string) {
	r.ParseForm()
	token := r.Form.Get("token")
	if h, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		token = h
	}
	s.mu.Lock()
	if wait, limited := s.overBudget(method); limited {
		s.log(method, http.StatusTooManyRequests, "")
		s.mu.Unlock()
		w.Header().Set("Retry-After", strconv.Itoa(wait))
		reply(w, http.StatusTooManyRequests, map[string]any{"ok": false, "error": "ratelimited"})
		return
	}
	for i := range s.failures {
		f := &s.failures[i]
		if f.Count == 0 || (f.Method != "" && f.Method != method) {
			continue
		}
		if f.Count > 0 {
			f.Count--
		}
		if f.AfterCall {
			s.call(method, token, r)
		}
		if f.Error != "" {
			s.log(method, 200, f.Error)
			s.mu.Unlock()
			reply(w, 200, map[string]any{"ok": false, "error": f.Error})
			return
		}
		s.log(method, f.Status, "")
		s.mu.Unlock()
		if f.Status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", strconv.Itoa(max(f.RetryAfter, 0)))
			reply(w, f.Status, map[string]any{"ok": false, "error": "ratelimited"})
			return
		}
		w.WriteHeader(f.Status)
		w.Write([]byte("upstream error"))
		return
	}
	status, out := s.call(method, token, r)
	errCode, _ := out["error"].(string)
	s.log(method, status, errCode)
	s.mu.Unlock()
	reply(w, status, out)
}

func (s *Server) log(method string, status int, errCode string) {
	s.requests = append(s.requests, Request{Method: method, Status: status, Error: errCode})
	s.notify()
}

func fail(code string) (int, map[string]any) { return 200, map[string]any{"ok": false, "error": code} }

// call runs one Web API method; s.mu is held.
func (s *Server) call(method, token string, r *http.Request) (int, map[string]any) {
	if token == "" {
		return fail("not_authed")
	}
	switch method {
	case "apps.connections.open":
		switch token {
		case AppToken:
		case BotToken:
			return fail("not_allowed_token_type")
		default:
			return fail("invalid_auth")
		}
		s.nextID++
		ticket := fmt.Sprintf("ticket-%d", s.nextID)
		s.tickets[ticket] = true
		u := "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/link/?ticket=" + ticket + "&app_id=" + AppID
		return 200, map[string]any{"ok": true, "url": u}
	}
	switch token {
	case BotToken:
	case AppToken:
		return fail("not_allowed_token_type")
	default:
		return fail("invalid_auth")
	}
	switch method {
	case "auth.test":
		return 200, map[string]any{"ok": true, "url": "https://teamkit-test.slack.com/", "team": "teamkit test",
			"user": "teamkit", "team_id": TeamID, "user_id": BotUser, "bot_id": BotID, "is_enterprise_install": false}
	case "chat.postMessage":
		ch := r.Form.Get("channel")
		switch ch {
		case Channel, ChannelName, "#" + ChannelName:
			ch = Channel
		case "":
			return fail("channel_not_found")
		default:
			return fail("channel_not_found")
		}
		text := r.Form.Get("text")
		if strings.TrimSpace(text) == "" {
			return fail("no_text")
		}
		m := Message{Channel: ch, TS: s.ts(), Text: text, User: BotUser, BotID: BotID, ThreadTS: r.Form.Get("thread_ts")}
		if md := r.Form.Get("metadata"); md != "" {
			if !json.Valid([]byte(md)) {
				return fail("invalid_metadata_format")
			}
			m.Metadata = json.RawMessage(md)
		}
		s.messages = append(s.messages, m)
		msg := map[string]any{"type": "message", "text": m.Text, "user": m.User, "bot_id": m.BotID, "ts": m.TS, "app_id": AppID, "team": TeamID}
		return 200, map[string]any{"ok": true, "channel": ch, "ts": m.TS, "message": msg}
	case "conversations.history":
		ch := r.Form.Get("channel")
		if ch != Channel {
			return fail("channel_not_found")
		}
		oldest, _ := strconv.ParseFloat(r.Form.Get("oldest"), 64)
		meta := r.Form.Get("include_all_metadata") == "1" || r.Form.Get("include_all_metadata") == "true"
		var out []map[string]any
		for i := len(s.messages) - 1; i >= 0; i-- {
			m := s.messages[i]
			if m.Channel != ch || m.ThreadTS != "" {
				continue
			}
			if ts, _ := strconv.ParseFloat(m.TS, 64); ts < oldest {
				continue
			}
			o := map[string]any{"type": "message", "text": m.Text, "user": m.User, "ts": m.TS}
			if m.BotID != "" {
				o["bot_id"] = m.BotID
			}
			if meta && m.Metadata != nil {
				o["metadata"] = m.Metadata
			}
			out = append(out, o)
		}
		// Newest first, a page of limit (Slack's default 100, at most
		// 999) at a time; the cursor is the index of the next message.
		limit, _ := strconv.Atoi(r.Form.Get("limit"))
		if limit <= 0 {
			limit = 100
		}
		limit = min(limit, 999)
		from := 0
		if c := r.Form.Get("cursor"); c != "" {
			n, err := strconv.Atoi(strings.TrimPrefix(c, "next:"))
			if err != nil || n < 0 || n > len(out) {
				return fail("invalid_cursor")
			}
			from = n
		}
		to := min(from+limit, len(out))
		page := out[from:to]
		if page == nil {
			page = []map[string]any{}
		}
		next := ""
		if to < len(out) {
			next = fmt.Sprintf("next:%d", to)
		}
		return 200, map[string]any{"ok": true, "messages": page, "has_more": next != "", "response_metadata": map[string]any{"next_cursor": next}}
	case "reactions.get":
		ch, ts := r.Form.Get("channel"), r.Form.Get("timestamp")
		m, ok := s.find(ch, ts)
		if !ok {
			return fail("message_not_found")
		}
		full := r.Form.Get("full") == "true" || r.Form.Get("full") == "1"
		o := s.wire(m)
		var rs []map[string]any
		for _, re := range s.reactions[ch+"/"+ts] {
			users := re.users
			if !full && len(users) > partialUsers {
				users = users[:partialUsers]
			}
			rs = append(rs, map[string]any{"name": re.name, "users": users, "count": len(re.users)})
		}
		if rs != nil {
			o["reactions"] = rs
		}
		return 200, map[string]any{"ok": true, "type": "message", "channel": ch, "message": o}
	case "conversations.replies":
		ch, ts := r.Form.Get("channel"), r.Form.Get("ts")
		if ch != Channel {
			return fail("channel_not_found")
		}
		parent, ok := s.find(ch, ts)
		if !ok || parent.ThreadTS != "" && parent.ThreadTS != parent.TS {
			return fail("thread_not_found")
		}
		thread := []Message{parent}
		for _, m := range s.messages {
			if m.Channel == ch && m.ThreadTS == ts && m.TS != ts {
				thread = append(thread, m)
			}
		}
		limit, _ := strconv.Atoi(r.Form.Get("limit"))
		if limit <= 0 || limit > 1000 {
			limit = 1000
		}
		// The cursor is the index of the next reply; every page starts
		// with the parent, as Slack's do.
		from := 1
		if c := r.Form.Get("cursor"); c != "" {
			n, err := strconv.Atoi(strings.TrimPrefix(c, "next:"))
			if err != nil || n < 1 || n > len(thread) {
				return fail("invalid_cursor")
			}
			from = n
		}
		out := []map[string]any{s.wire(parent)}
		to := min(from+limit-1, len(thread))
		for _, m := range thread[from:to] {
			out = append(out, s.wire(m))
		}
		next := ""
		if to < len(thread) {
			next = fmt.Sprintf("next:%d", to)
		}
		return 200, map[string]any{"ok": true, "messages": out, "has_more": next != "", "response_metadata": map[string]any{"next_cursor": next}}
	}
	return fail("unknown_method")
}

// find is message (channel, ts), a top-level one or a reply; s.mu is held.
func (s *Server) find(channel, ts string) (Message, bool) {
	if i := s.index(channel, ts); i >= 0 {
		return s.messages[i], true
	}
	return Message{}, false
}

func (s *Server) index(channel, ts string) int {
	for i, m := range s.messages {
		if m.Channel == channel && m.TS == ts {
			return i
		}
	}
	return -1
}

// wire is m as the Web API lists it; s.mu is held.
func (s *Server) wire(m Message) map[string]any {
	o := map[string]any{"type": "message", "text": m.Text, "user": m.User, "ts": m.TS}
	if m.BotID != "" {
		o["bot_id"] = m.BotID
		o["app_id"] = AppID
	}
	if m.ThreadTS != "" {
		o["thread_ts"] = m.ThreadTS
	}
	if m.Edited {
		o["edited"] = map[string]any{"user": m.User, "ts": m.TS}
	}
	n := 0
	for _, r := range s.messages {
		if r.Channel == m.Channel && r.ThreadTS == m.TS && r.TS != m.TS {
			n++
		}
	}
	if n > 0 {
		o["thread_ts"] = m.TS
		o["reply_count"] = n
	}
	return o
}

// limit is a budget of Calls per Per for one method.
type limit struct {
	calls int
	per   time.Duration
}

// overBudget counts a call of method against its budget, if it has one,
// and says how many seconds to wait when it is spent; s.mu is held. A call
// refused is not counted, as Slack's are not.
func (s *Server) overBudget(method string) (int, bool) {
	l, ok := s.limits[method]
	if !ok {
		return 0, false
	}
	now := time.Now()
	kept := s.calls[method][:0]
	for _, t := range s.calls[method] {
		if now.Sub(t) < l.per {
			kept = append(kept, t)
		}
	}
	s.calls[method] = kept
	if len(kept) >= l.calls {
		wait := l.per - now.Sub(kept[0])
		return max(int((wait+time.Second-1)/time.Second), 1), true
	}
	s.calls[method] = append(kept, now)
	return 0, false
}

// Limit gives method a budget of calls per duration, as Slack's tiers do
// (tier 3: about 50 a minute): a call past it gets HTTP 429 with the
// Retry-After until the oldest counted call leaves the window. calls 0
// removes the budget.
func (s *Server) Limit(method string, calls int, per time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if calls <= 0 {
		delete(s.limits, method)
		return
	}
	s.limits[method] = limit{calls: calls, per: per}
	s.calls[method] = nil
}

// ts is a message timestamp as Slack makes them: Unix seconds and
// microseconds of the wall clock, strictly increasing.
func (s *Server) ts() string {
	us := time.Now().UnixMicro()
	if us <= s.nextTS {
		us = s.nextTS + 100
	}
	s.nextTS = us
	return fmt.Sprintf("%d.%06d", us/1e6, us%1e6)
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// socket serves one Socket-Mode connection: hello, then every envelope not
// yet acknowledged, then new ones as they are injected; acks are read
// until the connection ends.
func (s *Server) socket(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	ticket := r.URL.Query().Get("ticket")
	ok := s.tickets[ticket]
	delete(s.tickets, ticket) // a ticket is good for one connection
	s.mu.Unlock()
	if !ok {
		http.Error(w, "invalid ticket", http.StatusUnauthorized)
		return
	}
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	wc := &wsConn{c: c, done: make(chan struct{})}
	defer close(wc.done)
	defer c.Close()
	hello, _ := json.Marshal(map[string]any{"type": "hello", "num_connections": 1,
		"debug_info":      map[string]any{"host": "applink-teamkit-test", "build_number": 1, "approximate_connection_time": 18060},
		"connection_info": map[string]any{"app_id": AppID}})
	if wc.write(hello) != nil {
		return
	}
	s.mu.Lock()
	if s.conn != nil {
		s.conn.c.Close() // one connection at a time: the newest gets the events
	}
	s.conn = wc
	s.conns++
	for _, e := range s.envs {
		if !e.acked {
			if e.sent {
				e.attempt++
			}
			s.send(e)
		}
	}
	s.notify()
	s.mu.Unlock()
	// Slack pings; socketmode reconnects if it hears none for 30s.
	go func() {
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-wc.done:
				return
			case <-t.C:
				wc.wmu.Lock()
				wc.c.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(5*time.Second))
				wc.wmu.Unlock()
			}
		}
	}()
	for {
		_, data, err := c.ReadMessage()
		if err != nil {
			break
		}
		var ack struct {
			EnvelopeID string `json:"envelope_id"`
		}
		if json.Unmarshal(data, &ack) != nil || ack.EnvelopeID == "" {
			continue
		}
		s.mu.Lock()
		if s.dropNextAck {
			// The socket dies between the event and its ack: Slack never
			// hears the ack, and delivers the envelope again.
			s.dropNextAck = false
			s.mu.Unlock()
			c.Close()
			break
		}
		for _, e := range s.envs {
			if e.id == ack.EnvelopeID {
				e.acked = true
			}
		}
		s.acks = append(s.acks, ack.EnvelopeID)
		s.notify()
		s.mu.Unlock()
	}
	s.mu.Lock()
	if s.conn == wc {
		s.conn = nil
	}
	s.notify()
	s.mu.Unlock()
}

// send writes envelope e to the current connection, if any; s.mu is held.
func (s *Server) send(e *envelope) {
	if s.conn == nil {
		return
	}
	reason := ""
	if e.attempt > 0 {
		reason = "timeout"
	}
	frame, _ := json.Marshal(map[string]any{"envelope_id": e.id, "type": "events_api", "payload": e.payload,
		"accepts_response_payload": false, "retry_attempt": e.attempt, "retry_reason": reason})
	if s.conn.write(frame) == nil {
		e.sent = true
	}
}

// React is user adding reaction name to message (channel, ts): it is
// recorded and reaction_added delivered, and the envelope id returned. A
// reaction the user already added changes nothing and delivers nothing
// (""), as Slack answers already_reacted.
func (s *Server) React(user, name, channel, ts string) string {
	s.mu.Lock()
	key := channel + "/" + ts
	rs := s.reactions[key]
	i := 0
	for i < len(rs) && rs[i].name != name {
		i++
	}
	if i == len(rs) {
		rs = append(rs, reaction{name: name})
	}
	for _, u := range rs[i].users {
		if u == user {
			s.mu.Unlock()
			return ""
		}
	}
	rs[i].users = append(rs[i].users, user)
	s.reactions[key] = rs
	ets := s.ts()
	s.mu.Unlock()
	return s.Inject(Reaction(user, name, channel, ts, ets))
}

// Unreact is user removing their reaction name from message (channel,
// ts): reaction_removed is delivered. Removing one not there delivers
// nothing ("").
func (s *Server) Unreact(user, name, channel, ts string) string {
	s.mu.Lock()
	key := channel + "/" + ts
	rs := s.reactions[key]
	found := false
	for i := range rs {
		if rs[i].name != name {
			continue
		}
		for j, u := range rs[i].users {
			if u == user {
				rs[i].users = append(rs[i].users[:j:j], rs[i].users[j+1:]...)
				found = true
				break
			}
		}
		if len(rs[i].users) == 0 {
			rs = append(rs[:i:i], rs[i+1:]...)
		}
		break
	}
	s.reactions[key] = rs
	ets := s.ts()
	s.mu.Unlock()
	if !found {
		return ""
	}
	ev := Reaction(user, name, channel, ts, ets)
	ev["type"] = "reaction_removed"
	return s.Inject(ev)
}

// PostReply is user replying text in the thread of (channel, threadTS): the
// reply is recorded and its message event delivered. It returns the
// reply's ts and the envelope id.
func (s *Server) PostReply(user, text, channel, threadTS string) (ts, env string) {
	s.mu.Lock()
	ts = s.ts()
	s.messages = append(s.messages, Message{Channel: channel, TS: ts, Text: text, User: user, ThreadTS: threadTS})
	s.mu.Unlock()
	return ts, s.Inject(Reply(user, text, channel, threadTS, ts))
}

// PostBotReply is teamkit's own bot replying in the thread.
func (s *Server) PostBotReply(text, channel, threadTS string) (ts, env string) {
	s.mu.Lock()
	ts = s.ts()
	s.messages = append(s.messages, Message{Channel: channel, TS: ts, Text: text, User: BotUser, BotID: BotID, ThreadTS: threadTS})
	s.mu.Unlock()
	return ts, s.Inject(BotReply(BotID, BotUser, text, channel, threadTS, ts))
}

// EditReply is the author of reply (channel, ts) changing its text:
// message_changed is delivered. It returns "" when there is no such reply.
func (s *Server) EditReply(channel, ts, text string) string {
	s.mu.Lock()
	i := s.index(channel, ts)
	if i < 0 || s.messages[i].ThreadTS == "" {
		s.mu.Unlock()
		return ""
	}
	m := &s.messages[i]
	m.Text, m.Edited = text, true
	user, thread := m.User, m.ThreadTS
	s.mu.Unlock()
	return s.Inject(Edit(user, text, channel, thread, ts))
}

// DeleteReply is the author deleting reply (channel, ts): it is gone from
// the thread, and message_deleted is delivered. It returns "" when there
// is no such reply.
func (s *Server) DeleteReply(channel, ts string) string {
	s.mu.Lock()
	i := s.index(channel, ts)
	if i < 0 || s.messages[i].ThreadTS == "" {
		s.mu.Unlock()
		return ""
	}
	m := s.messages[i]
	s.messages = append(s.messages[:i:i], s.messages[i+1:]...)
	s.mu.Unlock()
	return s.Inject(map[string]any{"type": "message", "subtype": "message_deleted", "hidden": true, "channel": channel,
		"channel_type": "channel", "ts": m.TS, "deleted_ts": m.TS, "event_ts": m.TS,
		"previous_message": map[string]any{"type": "message", "user": m.User, "text": m.Text, "ts": m.TS, "thread_ts": m.ThreadTS}})
}

// LastReply is user's newest reply in the thread of (channel, threadTS).
func (s *Server) LastReply(user, channel, threadTS string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.messages) - 1; i >= 0; i-- {
		m := s.messages[i]
		if m.Channel == channel && m.ThreadTS == threadTS && m.TS != threadTS && m.User == user {
			return m, true
		}
	}
	return Message{}, false
}

// Inject delivers an Events API event (the inner "event" object) in an
// events_api envelope, now or on the next connection, and returns the
// envelope id.
func (s *Server) Inject(event map[string]any) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	id := fmt.Sprintf("env-%04d-%s", s.nextID, strings.Repeat("0", 4))
	payload, _ := json.Marshal(map[string]any{
		"token": "verification-token-unused", "team_id": TeamID, "api_app_id": AppID, "event": event,
		"type": "event_callback", "event_id": fmt.Sprintf("Ev%08d", s.nextID), "event_time": time.Now().Unix(),
		"authorizations":        []map[string]any{{"team_id": TeamID, "user_id": BotUser, "is_bot": true}},
		"is_ext_shared_channel": false,
		"event_context":         "4-teamkit-test",
	})
	e := &envelope{id: id, payload: payload}
	s.envs = append(s.envs, e)
	s.send(e)
	s.notify()
	return id
}

// Raw writes frame to the current connection as it is (a malformed
// envelope, say). It reports false when no connection is open.
func (s *Server) Raw(frame string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn != nil && s.conn.write([]byte(frame)) == nil
}

// Disconnect sends Slack's disconnect envelope: the client is to close and
// reconnect. (Slack's disconnect carries no envelope_id: there is nothing
// to acknowledge.)
func (s *Server) Disconnect() bool {
	frame, _ := json.Marshal(map[string]any{"type": "disconnect", "reason": "refresh_requested",
		"debug_info": map[string]any{"host": "applink-teamkit-test"}})
	return s.Raw(string(frame))
}

// DropNextAck makes the connection that receives the next ack close instead
// of recording it, so the envelope is delivered again on the next one.
func (s *Server) DropNextAck() {
	s.mu.Lock()
	s.dropNextAck = true
	s.mu.Unlock()
}

// Fail adds a failure.
func (s *Server) Fail(f Failure) {
	s.mu.Lock()
	s.failures = append(s.failures, f)
	s.mu.Unlock()
}

// Heal clears every failure.
func (s *Server) Heal() {
	s.mu.Lock()
	s.failures = nil
	s.mu.Unlock()
}

// Messages returns the channel's messages, oldest first.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.messages...)
}

// Requests returns the Web API log.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Acks returns the envelope ids acknowledged, in order (a redelivered
// envelope acknowledged twice appears twice).
func (s *Server) Acks() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.acks...)
}

// Connections is how many Socket-Mode connections got their hello.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns
}

// Wait blocks until cond (called with the server locked) holds or ctx ends.
func (s *Server) Wait(ctx context.Context, cond func(v View) bool) error {
	for {
		s.mu.Lock()
		ok := cond(View{s})
		ch := s.changed
		s.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// View is what a Wait condition may look at.
type View struct{ s *Server }

// Acked reports whether envelope id was acknowledged.
func (v View) Acked(id string) bool {
	for _, e := range v.s.envs {
		if e.id == id {
			return e.acked
		}
	}
	return false
}

// AckedAny reports whether any ack named envelope id, including ids the
// server did not send as an envelope (a Raw frame's).
func (v View) AckedAny(id string) bool {
	for _, a := range v.s.acks {
		if a == id {
			return true
		}
	}
	return false
}

// Connected reports whether a connection is open now.
func (v View) Connected() bool { return v.s.conn != nil }

// Connections is how many connections got their hello.
func (v View) Connections() int { return v.s.conns }

// Messages is how many messages were posted.
func (v View) Messages() int { return len(v.s.messages) }

// Requests is the Web API log so far.
func (v View) Requests() []Request { return v.s.requests }

// LastQuestion is the newest message posted with teamkit's metadata, or
// false when there is none.
func (s *Server) LastQuestion() (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.messages) - 1; i >= 0; i-- {
		if s.messages[i].Metadata != nil {
			return s.messages[i], true
		}
	}
	return Message{}, false
}

// NewTS is a fresh ts, later than every earlier one.
func (s *Server) NewTS() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ts()
}

// Reaction is a reaction_added event by user on message (channel, ts).
func Reaction(user, name, channel, ts, eventTS string) map[string]any {
	return map[string]any{"type": "reaction_added", "user": user, "reaction": name, "item_user": BotUser,
		"item": map[string]any{"type": "message", "channel": channel, "ts": ts}, "event_ts": eventTS}
}

// Reply is a message event: user's reply in the thread of (channel,
// threadTS), with its own ts.
func Reply(user, text, channel, threadTS, ts string) map[string]any {
	return map[string]any{"type": "message", "user": user, "text": text, "channel": channel, "channel_type": "channel",
		"ts": ts, "thread_ts": threadTS, "event_ts": ts, "client_msg_id": "c-" + ts, "team": TeamID}
}

// Edit is a message_changed event: user edited their reply in the thread.
func Edit(user, text, channel, threadTS, ts string) map[string]any {
	return map[string]any{"type": "message", "subtype": "message_changed", "hidden": true, "channel": channel,
		"channel_type": "channel", "ts": ts, "event_ts": ts,
		"message": map[string]any{"type": "message", "user": user, "text": text, "ts": ts, "thread_ts": threadTS,
			"edited": map[string]any{"user": user, "ts": ts}},
		"previous_message": map[string]any{"type": "message", "user": user, "text": "(before the edit)", "ts": ts, "thread_ts": threadTS}}
}

// BotReply is a message a bot posted in the thread (teamkit's own echo,
// say).
func BotReply(botID, user, text, channel, threadTS, ts string) map[string]any {
	return map[string]any{"type": "message", "user": user, "bot_id": botID, "app_id": AppID, "text": text,
		"channel": channel, "channel_type": "channel", "ts": ts, "thread_ts": threadTS, "event_ts": ts}
}

// Join is a channel_join message in the thread's channel.
func Join(user, channel, ts string) map[string]any {
	return map[string]any{"type": "message", "subtype": "channel_join", "user": user, "text": "<@" + user + "> has joined the channel",
		"channel": channel, "channel_type": "channel", "ts": ts, "event_ts": ts}
}
