// Package modeltest is a scripted model server for end-to-end tests of the
// real agent CLIs (claude, codex, gemini, opencode) without an API key or a
// network: it listens on 127.0.0.1 and speaks just enough of each CLI's wire
// protocol — Anthropic Messages, OpenAI Responses, Gemini generateContent —
// to make the agent call its shell tool with the commands a Script chooses.
//
// The server keeps no conversation state. Each request carries the whole
// conversation, so the next turn is chosen from it: the briefing (the first
// user text) and the results of the tool calls made so far. That makes it
// indifferent to the extra requests the CLIs make (titles, token counts,
// routing, warm-ups, retries): a request without a shell tool is answered
// with a short text (or the JSON a router asks for), and a retried request
// gets the same turn again.
//
// Every request is logged with its body, so a test can assert what a CLI
// sent: that the briefing arrived whole, that a re-spawned agent's first
// request carried the answer.
//
// Internal: a test kit; only tests import it, never a shipped binary.
package modeltest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Protocols the server speaks.
const (
	Anthropic = "anthropic" // POST /v1/messages
	OpenAI    = "openai"    // POST /v1/responses
	Gemini    = "gemini"    // POST /v1beta/models/M:generateContent | :streamGenerateContent
)

// Conversation is a request reduced to what a Script needs.
type Conversation struct {
	Protocol string
	// Shell is the name of the shell tool the CLI offered; "" when it offered
	// none (a title, a token count, a routing or summary request).
	Shell string
	// Briefing is the first user text that looks like the start of the
	// agent's task (see Server.Marker); "" when none does.
	Briefing string
	// Results are the outputs of the tool calls so far, oldest first.
	Results []string
	// Last is the text of the conversation's last message when the user (or
	// the CLI on its behalf, as with a hook's reason) sent it: what the
	// model is asked now. Anthropic only.
	Last string
	// Continued is the last user text that continues the session
	// (ContinueMarker: a re-spawn that resumed it), and Since how many of
	// Results came before it: the earlier runs' turns, which the model sees
	// because the CLI resumed the session.
	Continued string
	Since     int
}

// user notes a user text of the conversation, in order with its results.
func (c *Conversation) user(text string) {
	if strings.Contains(text, ContinueMarker) {
		c.Continued, c.Since = text, len(c.Results)
	}
}

// current is what the model works from now: the briefing and every result,
// or in a continued session the continuing prompt and the results since it.
func (c Conversation) current() (prompt string, results []string) {
	if c.Continued != "" {
		return c.Continued, c.Results[c.Since:]
	}
	return c.Briefing, c.Results
}

// Turn is what the model answers: a shell command to run, or else a text
// that ends the agent's turn.
type Turn struct {
	Command string
	Text    string
}

// Script chooses the next turn of a conversation that offers a shell tool.
type Script func(Conversation) Turn

// Request is one logged request.
type Request struct {
	Seq      int
	Time     time.Time
	Protocol string // "" for a path the server does not know
	Method   string
	Path     string // with the query
	Body     []byte
	// Conversation is the request reduced (zero for unknown paths).
	Conversation Conversation
	// Turn is what the server answered, when it ran the Script.
	Turn *Turn
	// Usage is the token usage the answer reported (zero for a fault, and
	// for a path that is not a model request).
	Usage Usage
	// Status is the HTTP status answered.
	Status int
}

// Usage is the token usage the server reports with each model answer, in
// each protocol's own fields.
type Usage struct {
	Input, Output, CacheRead, CacheWrite int
}

// Add is u plus v.
func (u Usage) Add(v Usage) Usage {
	return Usage{u.Input + v.Input, u.Output + v.Output, u.CacheRead + v.CacheRead, u.CacheWrite + v.CacheWrite}
}

// DefaultUsage is what each answer reports until SetUsage changes it.
var DefaultUsage = Usage{Input: 10, Output: 5}

// Fault makes the server answer every model request with an error, in the
// protocol's own shape, instead of a turn.
type Fault struct {
	// Status is 401 (bad credentials) or 429 (rate or usage limit).
	Status int
	// ResetIn, for a 429, is when the limit resets: sent as retry-after
	// and anthropic-ratelimit-*-reset (Anthropic), x-ratelimit-reset-*
	// (OpenAI), and in the error's body where the protocol has a field.
	ResetIn time.Duration
	// Usage, for a 429 on OpenAI, makes it codex's "usage limit reached"
	// (an account's quota) rather than a rate limit.
	Usage bool
}

// Server is the scripted model. Create it with New.
type Server struct {
	// Marker picks the briefing among the user texts: the first text that
	// contains it. Empty: the first user text.
	Marker string
	// Latency holds every model request this long before it is answered,
	// as a real model's time to its first token: benchmarks use it so that
	// agents wait on the model, as they do in use, rather than on this
	// machine's CPU. Zero answers at once.
	Latency time.Duration

	script Script
	usage  Usage
	fault  *Fault
	ln     net.Listener
	srv    *http.Server

	mu   sync.Mutex
	reqs []Request
}

// New starts a server on a free port of 127.0.0.1 that answers with script.
func New(script Script) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{script: script, ln: ln, usage: DefaultUsage}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 30 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// SetScript makes the server answer with script from the next request on.
func (s *Server) SetScript(script Script) {
	s.mu.Lock()
	s.script = script
	s.mu.Unlock()
}

// SetUsage makes every model answer from the next on report u.
func (s *Server) SetUsage(u Usage) {
	s.mu.Lock()
	s.usage = u
	s.mu.Unlock()
}

// SetFault makes every model request from the next on fail with f; nil
// answers normally again.
func (s *Server) SetFault(f *Fault) {
	s.mu.Lock()
	s.fault = f
	s.mu.Unlock()
}

// Reported is the sum of the usage the server reported, over every model
// request (the agent's turns and the CLI's side requests: a router, a title).
func (s *Server) Reported() Usage {
	var u Usage
	for _, r := range s.Requests() {
		u = u.Add(r.Usage)
	}
	return u
}

func (s *Server) current() (Usage, *Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.usage, s.fault
}

// URL is the server's base URL, http://127.0.0.1:PORT.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// Requests returns a copy of the log.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

func (s *Server) log(r Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.Seq = len(s.reqs) + 1
	s.reqs = append(s.reqs, r)
}

// ServeHTTP routes a request to its protocol.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	entry := Request{Time: time.Now(), Method: r.Method, Path: r.URL.RequestURI(), Body: body}
	var h handler
	p := r.URL.Path
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/messages/count_tokens"):
		entry.Protocol = Anthropic
		h = countTokensAnthropic
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/messages"):
		entry.Protocol = Anthropic
		h = s.anthropic
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/responses"):
		entry.Protocol = OpenAI
		h = s.openai
	case r.Method == http.MethodPost && strings.HasSuffix(p, ":countTokens"):
		entry.Protocol = Gemini
		h = countTokensGemini
	case r.Method == http.MethodPost && (strings.HasSuffix(p, ":generateContent") || strings.HasSuffix(p, ":streamGenerateContent")):
		entry.Protocol = Gemini
		h = s.gemini
	case r.Method == http.MethodGet && strings.HasSuffix(p, "/models"):
		// codex and opencode may list models; an empty list is an answer.
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[],"models":[]}`)
		s.log(entry)
		return
	default:
		s.log(entry)
		http.Error(w, `{"error":{"message":"modeltest: unknown endpoint"}}`, http.StatusNotFound)
		return
	}
	if s.Latency > 0 {
		t := time.NewTimer(s.Latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			s.log(entry)
			return
		}
	}
	if _, f := s.current(); f != nil && h != nil && entry.Protocol != "" && !strings.HasSuffix(p, "count_tokens") && !strings.HasSuffix(p, ":countTokens") {
		entry.Status = f.Status
		s.log(entry)
		s.writeFault(w, entry.Protocol, *f)
		return
	}
	turn, err := h(w, r, body, &entry)
	if err != nil {
		entry.Turn = nil
		s.log(entry)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"type": "invalid_request_error", "message": "modeltest: " + err.Error()}})
		return
	}
	entry.Turn, entry.Status = turn, http.StatusOK
	s.log(entry)
}

// handler answers one request of its protocol; it fills e.Conversation and
// returns the turn it answered, if it ran the script.
type handler func(w http.ResponseWriter, r *http.Request, body []byte, e *Request) (*Turn, error)

// next runs the script on a conversation with a shell tool.
func (s *Server) next(c Conversation) Turn {
	s.mu.Lock()
	script := s.script
	s.mu.Unlock()
	t := script(c)
	if t.Command == "" && t.Text == "" {
		t.Text = "Done."
	}
	return t
}

// pickBriefing is the first text holding the marker (or the first text).
func (s *Server) pickBriefing(texts []string) string {
	for _, t := range texts {
		if s.Marker == "" || strings.Contains(t, s.Marker) {
			return t
		}
	}
	return ""
}

// sse writes one server-sent event and flushes it.
func sse(w http.ResponseWriter, event string, data any) {
	var b bytes.Buffer
	if event != "" {
		fmt.Fprintf(&b, "event: %s\n", event)
	}
	j, _ := json.Marshal(data)
	fmt.Fprintf(&b, "data: %s\n\n", j)
	w.Write(b.Bytes())
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

// shellNames are the shell tools of the CLIs, lower-cased.
var shellNames = map[string]bool{
	"bash": true, "shell": true, "exec_command": true, "shell_command": true,
	"local_shell": true, "run_shell_command": true,
}

func isShell(name string) bool { return shellNames[strings.ToLower(name)] }

// resultText flattens a tool result, which each protocol shapes its own way
// (a string, a list of text blocks, an object with an output field).
func resultText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []any:
		var parts []string
		for _, e := range x {
			parts = append(parts, resultText(e))
		}
		return strings.Join(parts, "\n")
	case map[string]any:
		for _, k := range []string{"text", "output", "content", "llmContent", "stdout"} {
			if v, ok := x[k]; ok {
				return resultText(v)
			}
		}
		j, _ := json.Marshal(x)
		return string(j)
	default:
		j, _ := json.Marshal(x)
		return string(j)
	}
}
