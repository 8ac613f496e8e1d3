// Package runstream reads the structured stream an agent CLI writes on its
// standard output — claude's stream-json, codex exec --json, gemini's
// stream-json, opencode run --format json — one line at a time, as it
// comes. From each line it takes what a person reading the run's log wants
// to see (the model's words, the commands it runs and what they print), and
// what the run's record keeps: the CLI's session id, the tokens the model
// reported, the cost where the CLI knows it, and why a turn failed (bad
// credentials, a usage or rate limit, a model error) with the CLI's own
// one-line reason and, when it gives one, the time the limit resets.
//
// A CLI's exit code is not trusted to say how its turn went (codex exits 0
// on a failed turn): the stream is.
//
// Public: a Go program embedding teamkit may import this package.
package runstream

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/teamkit/teamkit/pkg/termsafe"
)

// Formats a type's output= names.
const (
	None     = "none"
	Claude   = "claude-stream" // claude -p --output-format stream-json --verbose
	Codex    = "codex-json"    // codex exec --json
	Gemini   = "gemini-stream" // gemini --output-format stream-json
	OpenCode = "opencode-json" // opencode run --format json
)

// Formats lists every format, None first.
func Formats() []string { return []string{None, Claude, Codex, Gemini, OpenCode} }

// Known reports whether f is one of Formats.
func Known(f string) bool {
	for _, k := range Formats() {
		if f == k {
			return true
		}
	}
	return false
}

// How a run ended: the record's end field.
const (
	EndDone        = "done"
	EndFailedAuth  = "failed-auth"
	EndUsageLimit  = "usage-limit"
	EndRateLimited = "rate-limited"
	EndModelError  = "model-error"
	EndCrashed     = "crashed"
	EndStopped     = "stopped"
	EndTimeout     = "timeout"
	EndBudget      = "budget"
	// EndSessionGone: the run was to continue a CLI session the CLI no
	// longer has (SessionGone); it ended before its model was asked
	// anything.
	EndSessionGone = "session-gone"
)

// SessionGone reports whether msg is a CLI saying the session it was told
// to resume does not exist: claude 2.1.197 "No conversation found with
// session ID: <id>" (its stream's result, and stderr), codex 0.171.0 "no
// rollout found for thread id <id>" (stderr only: its --json stream stays
// empty), gemini 0.61.0 "Error resuming session: No previous sessions found
// for this project." (stderr, exit 42: as for a session its run recorded
// from the stream's init but never saved, its first request having failed).
func SessionGone(msg string) bool {
	low := strings.ToLower(msg)
	return strings.Contains(low, "no conversation found with session id") || strings.Contains(low, "no rollout found for thread id") ||
		strings.Contains(low, "error resuming session: no previous sessions found")
}

// Stderr reads a line the CLI wrote on its standard error, for what the
// stream does not carry: a session the CLI no longer has (SessionGone).
func (r *Reader) Stderr(line string) {
	if r != nil && r.Failure == nil && SessionGone(line) {
		r.fail(EndSessionGone, line, nil)
	}
}

// Tokens is the model's token usage: input that was not read from a cache,
// output, and the input read from and written to the provider's prompt
// cache.
type Tokens struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cache_read"`
	CacheWrite int64 `json:"cache_write"`
}

// Add is t plus u.
func (t Tokens) Add(u Tokens) Tokens {
	return Tokens{t.Input + u.Input, t.Output + u.Output, t.CacheRead + u.CacheRead, t.CacheWrite + u.CacheWrite}
}

// Total is every token counted.
func (t Tokens) Total() int64 { return t.Input + t.Output + t.CacheRead + t.CacheWrite }

// Failure is why a turn failed, as the CLI said it.
type Failure struct {
	// End is EndFailedAuth, EndUsageLimit, EndRateLimited or EndModelError.
	End string
	// Detail is the CLI's one-line reason, terminal-safe.
	Detail string
	// ResetsAt is when a limit resets, when the CLI said.
	ResetsAt *time.Time
	// Retries counts the rate limits the CLI reported in a row.
	Retries int
}

// RateLimitRetries is how many rate limits in a row a CLI may retry before
// its run is stopped: a passing limit is ridden out, but a CLI is not left
// to retry blindly for minutes (claude backs off for up to 10 attempts).
const RateLimitRetries = 3

// Fatal reports whether the run should be stopped now: retrying cannot help
// before a person acts (credentials) or the limit resets (a usage limit, a
// rate limit the CLI keeps hitting), while a CLI rides out a passing rate
// limit or a flaky model on its own.
func (f *Failure) Fatal() bool {
	return f != nil && (f.End == EndFailedAuth || f.End == EndUsageLimit || f.End == EndRateLimited && f.Retries >= RateLimitRetries)
}

// Reader reads one run's stream. Its fields are what it has read so far.
type Reader struct {
	Format  string
	Session string
	Tokens  Tokens
	// CostUSD is the cost the CLI reported (claude, opencode); nil when it
	// reports none.
	CostUSD *float64
	// Failure is the latest failure; a later successful turn clears a rate
	// limit or model error the CLI retried past.
	Failure *Failure
	// Events counts the stream's JSON lines.
	Events int
	// Base is what the CLI session this run continues had used before
	// it (codex): codex's turn.completed reports the thread's usage since
	// it started, and a resumed thread's goes on from its rollout, so the
	// run's own is what it reports less Base.
	Base Tokens

	now func() time.Time
	// claude: each assistant message's usage, by id, until the result
	// gives the run's total.
	messages map[string]Tokens
	// gemini: assistant text arrives in pieces.
	partial strings.Builder
	// opencode: the session id last read, usable or not (every event
	// names it; an unusable one is noted once).
	named string
}

// New reads a stream of format, judging reset times by now (time.Now when
// nil).
func New(format string, now func() time.Time) *Reader {
	if now == nil {
		now = time.Now
	}
	return &Reader{Format: format, now: now, messages: map[string]Tokens{}}
}

// Line reads one line of the stream and returns the readable lines it makes
// for the log. A line that is not JSON (a CLI's warning) is returned as it
// is.
func (r *Reader) Line(line []byte) []string {
	line = bytes.TrimRight(line, "\r\n")
	if r.Format == None || len(bytes.TrimSpace(line)) == 0 {
		return []string{string(line)}
	}
	var read func([]byte) ([]string, error)
	switch r.Format {
	case Claude:
		read = r.claude
	case Codex:
		read = r.codex
	case Gemini:
		read = r.gemini
	case OpenCode:
		read = r.opencode
	}
	if read == nil || line[0] != '{' {
		return []string{string(line)}
	}
	out, err := read(line)
	if err != nil {
		return []string{string(line)}
	}
	r.Events++
	return out
}

// Flush returns what is left of a partial text at the stream's end.
func (r *Reader) Flush() []string {
	if r.partial.Len() == 0 {
		return nil
	}
	s := r.partial.String()
	r.partial.Reset()
	return splitLines(s)
}

// End is how a run that exited with code ended, judged from the stream
// first: a failed turn is a failure whatever the code, and a run whose
// stream reported a failure it did not get past ended on that failure.
func (r *Reader) End(code int) (end, detail string) {
	if r != nil && r.Failure != nil {
		return r.Failure.End, r.Failure.Detail
	}
	if code == 0 {
		return EndDone, ""
	}
	return EndCrashed, fmt.Sprintf("exited with code %d", code)
}

func (r *Reader) fail(end, detail string, resets *time.Time) {
	retries := 0
	if end == EndRateLimited {
		retries = 1
		if r.Failure != nil && r.Failure.End == EndRateLimited {
			retries += r.Failure.Retries
		}
	}
	r.Failure = &Failure{End: end, Detail: oneLine(detail), ResetsAt: resets, Retries: retries}
}

// succeeded clears a failure the CLI got past by retrying.
func (r *Reader) succeeded() {
	if r.Failure != nil && !r.Failure.Fatal() {
		r.Failure = nil
	}
}

// classify turns a CLI's error text (and HTTP status, when known) into a
// failure.
func (r *Reader) classify(status int, msg string) {
	low := strings.ToLower(msg)
	switch {
	case SessionGone(msg):
		r.fail(EndSessionGone, msg, nil)
	case status == 401 || status == 403 || strings.Contains(low, "401 unauthorized") || strings.Contains(low, "authentication_failed") ||
		strings.Contains(low, "unauthenticated") || strings.Contains(low, "invalid x-api-key") || strings.Contains(low, "incorrect api key") ||
		strings.Contains(low, "not logged in") || strings.Contains(low, "invalid api key"):
		r.fail(EndFailedAuth, msg, nil)
	case strings.Contains(low, "usage limit") || strings.Contains(low, "usage_limit") || strings.Contains(low, "quota"):
		r.fail(EndUsageLimit, msg, r.resetFromText(msg))
	case status == 429 || strings.Contains(low, "429") || strings.Contains(low, "rate limit") || strings.Contains(low, "rate_limit") ||
		strings.Contains(low, "resource_exhausted") || strings.Contains(low, "too many requests"):
		r.fail(EndRateLimited, msg, r.resetFromText(msg))
	default:
		r.fail(EndModelError, msg, nil)
	}
}

// oneLine is the first non-empty line of s, terminal-safe and at most 300
// characters.
func oneLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			s = l
			break
		}
	}
	s = termsafe.Escape(s)
	if r := []rune(s); len(r) > 300 {
		s = string(r[:299]) + "…"
	}
	return s
}

func splitLines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// command is how a shell command the agent runs shows in the log.
func command(cmd string) []string {
	return prefix("$ ", splitLines(cmd))
}

func prefix(p string, lines []string) []string {
	for i := range lines {
		lines[i] = p + lines[i]
	}
	return lines
}
