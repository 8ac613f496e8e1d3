package ask_test

import (
	"encoding/json"
	"testing"
)

// Finding 6. The contract (DESIGN.md) lists an ask's fields up to
// answered_at, and every other absent time in teamkit's JSON is null
// (read_at, ended_at, started_at, parked_until…); an awaiting ask's JSON
// has no answered_at at all.
func TestAskJSONHasAnsweredAt(t *testing.T) {
	h, _ := newHarness(t)
	h.Want(0, "Which colour?")
	out := h.Want(0, "list", "t", "--json")
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("ask list t --json: %q: %v", out, err)
	}
	for _, k := range []string{"id", "team", "agent", "run", "issue", "kind", "question", "state", "answer", "decided_by", "decision", "created_at", "answered_at"} {
		if _, ok := got[k]; !ok {
			t.Errorf("ask list t --json: %s has no %q (want it, null while unanswered)", out, k)
		}
	}
}
