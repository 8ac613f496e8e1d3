package runstream

import (
	"bufio"
	"os"
	"strings"
	"testing"
	"time"
)

// read feeds a recorded stream (testdata: real output of the pinned CLIs
// against internal/modeltest, whose every answer reported 1000 input, 50
// output, 300 cache-read and 200 cache-write tokens) and returns the reader
// and the log lines it made.
func read(t *testing.T, format, file string, now time.Time) (*Reader, string) {
	t.Helper()
	f, err := os.Open("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := New(format, func() time.Time { return now })
	var log []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		log = append(log, r.Line(sc.Bytes())...)
	}
	log = append(log, r.Flush()...)
	return r, strings.Join(log, "\n")
}

func TestStreams(t *testing.T) {
	now := time.Date(2026, 12, 4, 3, 10, 30, 0, time.Local)
	two := Tokens{Input: 2000, Output: 100, CacheRead: 600, CacheWrite: 400}
	noWrite := Tokens{Input: 2000, Output: 100, CacheRead: 600}
	for _, c := range []struct {
		format, file string
		session      string
		tokens       Tokens
		cost         bool
		end, detail  string
		resets       time.Time
		log          []string
	}{
		{format: Claude, file: "claude-ok.jsonl", session: "a7c3fe85-1566-4488-a41b-ca9c1268951f", tokens: two, cost: true, end: EndDone,
			log: []string{"$ echo hello-from-tool", "hello-from-tool", "All done."}},
		{format: Claude, file: "claude-401.jsonl", session: "fbdb5d00-66b3-40bf-aec4-a4b62c213893", end: EndFailedAuth,
			detail: "API error 401 authentication_failed", log: []string{"API error 401 authentication_failed (attempt 1 of 10), retrying in 1s"}},
		{format: Codex, file: "codex-ok.jsonl", session: "01a23f08-369c-72a0-8da0-ead8226cc63e", tokens: noWrite, end: EndDone,
			log: []string{"$ /bin/bash -c 'echo hello-from-tool'", "hello-from-tool", "All done.", "warning: Model metadata"}},
		{format: Codex, file: "codex-401.jsonl", end: EndFailedAuth, session: "01a23f08-5652-7862-a51a-539d9b1266b9",
			detail: "unexpected status 401 Unauthorized: Incorrect API key provided", log: []string{"turn failed: unexpected status 401"}},
		{format: Codex, file: "codex-429u.jsonl", end: EndUsageLimit, session: "01a23f08-7dd7-7a40-87ac-194b2b36d70a",
			detail: "You’ve hit your usage limit.", resets: time.Date(2026, 12, 4, 3, 11, 0, 0, time.Local)},
		{format: Gemini, file: "gemini-ok.jsonl", session: "f02d5c33-1e9c-4ab9-a898-a465fe20b32d",
			tokens: Tokens{Input: 3000, Output: 150, CacheRead: 900}, end: EndDone, log: []string{"$ echo hello-from-tool", "hello-from-tool", "All done."}},
		{format: Gemini, file: "gemini-401.jsonl", session: "933a193c-204f-475f-a7c8-1d729046585c", end: EndFailedAuth,
			detail: "API error 401 UNAUTHENTICATED: Request had invalid authentication credentials"},
		{format: Gemini, file: "gemini-429.jsonl", session: "21962043-a11b-4315-a9f9-1a6c31a32bc6", end: EndUsageLimit,
			detail: "API error: Resource has been exhausted (e.g. check quota).", resets: now.Add(time.Second)},
		{format: OpenCode, file: "opencode-ok.jsonl", session: "ses_dc0f72096ffe5y4FvRhu5z9jb2", tokens: two, cost: true, end: EndDone,
			log: []string{"$ echo hello-from-tool", "hello-from-tool", "All done."}},
		{format: OpenCode, file: "opencode-401.jsonl", session: "ses_dc0f6af6affecwQ2SBJbmFLL27", end: EndFailedAuth, detail: "invalid x-api-key"},
	} {
		t.Run(c.file, func(t *testing.T) {
			r, log := read(t, c.format, c.file, now)
			if r.Session != c.session {
				t.Errorf("session %q, want %q", r.Session, c.session)
			}
			if r.Tokens != c.tokens {
				t.Errorf("tokens %+v, want %+v", r.Tokens, c.tokens)
			}
			if (r.CostUSD != nil && *r.CostUSD > 0) != c.cost {
				t.Errorf("cost %v, want one: %v", r.CostUSD, c.cost)
			}
			end, detail := r.End(0)
			if end != c.end || !strings.Contains(detail, c.detail) || strings.Contains(detail, "\n") {
				t.Errorf("end %s %q, want %s %q", end, detail, c.end, c.detail)
			}
			var resets time.Time
			if r.Failure != nil && r.Failure.ResetsAt != nil {
				resets = *r.Failure.ResetsAt
			}
			if !resets.Equal(c.resets) {
				t.Errorf("resets at %v, want %v", resets, c.resets)
			}
			for _, want := range c.log {
				if !strings.Contains(log, want) {
					t.Errorf("log lacks %q:\n%s", want, log)
				}
			}
			if strings.Contains(log, `{"type"`) {
				t.Errorf("log holds raw JSON:\n%s", log)
			}
		})
	}
}

// A failed turn is a failure whatever the exit code; a run with no failure
// is done on 0 and crashed otherwise; non-JSON lines pass through.
func TestEnds(t *testing.T) {
	r := New(Codex, nil)
	r.Line([]byte(`{"type":"turn.failed","error":{"message":"stream disconnected before completion"}}`))
	if end, _ := r.End(0); end != EndModelError {
		t.Errorf("a failed turn that exited 0 ended %s", end)
	}
	r = New(Codex, nil)
	if got := r.Line([]byte("plain warning")); len(got) != 1 || got[0] != "plain warning" {
		t.Errorf("plain line: %q", got)
	}
	if end, detail := r.End(3); end != EndCrashed || detail != "exited with code 3" {
		t.Errorf("end %s %q", end, detail)
	}
	// A rate limit the CLI retried past is forgotten.
	r = New(Claude, nil)
	r.Line([]byte(`{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":1000,"error_status":429,"error":"rate_limit"}`))
	if r.Failure == nil || r.Failure.End != EndRateLimited || r.Failure.ResetsAt == nil || r.Failure.Fatal() {
		t.Fatalf("429 retry: %+v", r.Failure)
	}
	r.Line([]byte(`{"type":"assistant","message":{"id":"x","model":"<synthetic>","content":[{"type":"text","text":"API Error: 429"}]}}`))
	if r.Failure == nil {
		t.Fatal("claude's own error message cleared the rate limit")
	}
	r.Line([]byte(`{"type":"result","subtype":"success","is_error":false,"session_id":"s","total_cost_usd":0.5,"usage":{"input_tokens":1}}`))
	if end, _ := r.End(0); end != EndDone {
		t.Errorf("after a retried 429 and success: %s", end)
	}
	// A rate limit hit 3 times in a row is fatal.
	r = New(Codex, nil)
	for i := 1; i <= RateLimitRetries; i++ {
		if r.Failure.Fatal() {
			t.Fatalf("fatal after %d rate limits", i-1)
		}
		r.Line([]byte(`{"type":"error","message":"Reconnecting... 1/5 (exceeded retry limit, last status: 429 Too Many Requests)"}`))
	}
	if !r.Failure.Fatal() || r.Failure.End != EndRateLimited {
		t.Errorf("after %d rate limits: %+v", RateLimitRetries, r.Failure)
	}
	// A subscription's limit is fatal, with its reset.
	r = New(Claude, nil)
	r.Line([]byte(`{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1796400000,"rateLimitType":"five_hour"}}`))
	if !r.Failure.Fatal() || r.Failure.End != EndUsageLimit || r.Failure.ResetsAt.Unix() != 1796400000 {
		t.Errorf("rejected: %+v", r.Failure)
	}
	// Terminal safety of the detail.
	r = New(Codex, nil)
	r.Line([]byte(`{"type":"turn.failed","error":{"message":"bad \u001b[31mred\u001b[0m"}}`))
	if _, d := r.End(0); strings.ContainsRune(d, 0x1b) {
		t.Errorf("detail holds an escape: %q", d)
	}
}

// TestSessionGone: a session the CLI no longer has ends the run
// session-gone, from claude's stream (its real result event, claude 2.1.197)
// and from codex's stderr (codex 0.171.0 prints nothing on --json).
func TestSessionGone(t *testing.T) {
	r, _ := read(t, Claude, "claude-gone.jsonl", time.Now())
	if end, detail := r.End(1); end != EndSessionGone || !strings.Contains(detail, "No conversation found") {
		t.Errorf("claude: end %q %q, want %s", end, detail, EndSessionGone)
	}
	c := New(Codex, nil)
	c.Stderr("WARNING: proceeding, even though we could not create PATH aliases")
	c.Stderr("Error: thread/resume: thread/resume failed: no rollout found for thread id 3f0e7d6a-1111-4222-8333-444455556666 (code -32600)")
	if end, _ := c.End(1); end != EndSessionGone {
		t.Errorf("codex: end %q, want %s", end, EndSessionGone)
	}
	g := New(Gemini, nil)
	g.Stderr("Error resuming session: No previous sessions found for this project.")
	if end, _ := g.End(42); end != EndSessionGone {
		t.Errorf("gemini: end %q, want %s", end, EndSessionGone)
	}
	if end, _ := New(Codex, nil).End(1); end != EndCrashed {
		t.Errorf("codex without the message: end %q, want %s", end, EndCrashed)
	}
}
