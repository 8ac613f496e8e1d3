package runstream

import "testing"

// TestReasoningTokensCount: the README says a run's tokens (and so a token
// budget) are every token the model reported. claude's output_tokens and
// codex's output_tokens include the model's thinking; gemini's and
// opencode's streams report it apart from the output:
//   - gemini-cli's StreamJsonFormatter.convertToStreamStats sums
//     tokens.candidates as output_tokens and tokens.total (the API's
//     totalTokenCount, thoughts included) as total_tokens;
//   - opencode's getUsage sets output = outputTokens - reasoningTokens and
//     reasoning = reasoningTokens (charged at the output price in its cost).
//
// A thinking model's tokens must not vanish from the count.
func TestReasoningTokensCount(t *testing.T) {
	g := New(Gemini, nil)
	g.Line([]byte(`{"type":"init","session_id":"s1","model":"gemini-2.5-pro"}`))
	// 3900 prompt (900 of it cached) + 150 candidates + 4000 thoughts.
	g.Line([]byte(`{"type":"result","status":"success","stats":{"total_tokens":8050,"input_tokens":3900,"output_tokens":150,"cached":900,"input":3000,"duration_ms":566,"tool_calls":1}}`))
	if got := g.Tokens.Total(); got != 8050 {
		t.Errorf("gemini: %d tokens counted (%+v), the model reported 8050", got, g.Tokens)
	}

	o := New(OpenCode, nil)
	o.Line([]byte(`{"type":"step_finish","sessionID":"ses_1","part":{"type":"step-finish","tokens":{"total":5550,"input":1000,"output":50,"reasoning":4000,"cache":{"write":200,"read":300}},"cost":0.05}}`))
	if got := o.Tokens.Total(); got != 5550 {
		t.Errorf("opencode: %d tokens counted (%+v), the model reported 5550", got, o.Tokens)
	}
}
