package runstream

import (
	"testing"
	"time"
)

// TestCodexDatedReset: codex words a usage limit's reset that is not today
// with its date (codex-rs/core/src/error.rs format_retry_timestamp: "%b
// %-d{suffix}, %Y %-I:%M %p", e.g. "Dec 9th, 2026 3:11 AM"; the same format
// strings are in codex-cli 0.171.0's binary): a weekly limit resets days
// away, not at that clock time today or tomorrow.
func TestCodexDatedReset(t *testing.T) {
	now := time.Date(2026, 12, 4, 3, 10, 30, 0, time.Local)
	r, _ := read(t, Codex, "codex-429u-dated.jsonl", now)
	if end, _ := r.End(0); end != EndUsageLimit {
		t.Fatalf("end %s, want %s", end, EndUsageLimit)
	}
	want := time.Date(2026, 12, 9, 3, 11, 0, 0, time.Local)
	if r.Failure.ResetsAt == nil || !r.Failure.ResetsAt.Equal(want) {
		t.Errorf("resets at %v, want %v", r.Failure.ResetsAt, want)
	}
	// A date in January said in December is next year's, as written.
	r = New(Codex, func() time.Time { return now })
	r.Line([]byte(`{"type":"turn.failed","error":{"message":"You've hit your usage limit. Try again at Jan 2nd, 2027 11:05 PM."}}`))
	want = time.Date(2027, 1, 2, 23, 5, 0, 0, time.Local)
	if r.Failure.ResetsAt == nil || !r.Failure.ResetsAt.Equal(want) {
		t.Errorf("resets at %v, want %v", r.Failure.ResetsAt, want)
	}
}

// TestClaudeOverage: claude 2.1.197 reports a five-hour limit passed with
// extra usage (overage) allowed as a rate_limit_event whose status stays
// "rejected" but whose isUsingOverage is true (its header parser: status
// "rejected" and overage-status "allowed" or "allowed_warning" set
// isUsingOverage, the status is left "rejected"), and the request is
// answered, billed as extra usage. The run goes on: it is no usage limit.
func TestClaudeOverage(t *testing.T) {
	r, log := read(t, Claude, "claude-overage.jsonl", time.Now())
	if end, detail := r.End(0); end != EndDone {
		t.Errorf("end %s %q, want %s\n%s", end, detail, EndDone, log)
	}
	// The same event with overage refused too is the account's limit.
	r = New(Claude, nil)
	r.Line([]byte(`{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1796371200,"rateLimitType":"five_hour","overageStatus":"rejected","overageDisabledReason":"out_of_credits","isUsingOverage":false},"session_id":"s"}`))
	if !r.Failure.Fatal() || r.Failure.End != EndUsageLimit || r.Failure.ResetsAt.Unix() != 1796371200 {
		t.Errorf("overage refused: %+v", r.Failure)
	}
}
