package modeltest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

const brief = BriefingMarker + "\n\n1. Run `/opt/tk/ready mark` now.\n2. run `/opt/tk/inbox`.\n`/opt/tk/ask \"your question\"`\n"

func post(t *testing.T, url, body string) string {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("POST %s: %d %s", url, resp.StatusCode, out)
	}
	return string(out)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestProtocols: each protocol's shell tool is called with the script's
// command, in the protocol's own shape; a request without a shell tool gets
// text; everything is logged.
func TestProtocols(t *testing.T) {
	s, err := New(Teamkit)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Marker = BriefingMarker
	u := s.URL()

	out := post(t, u+"/v1/messages", `{"model":"m","stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"text","text":`+jsonString(brief)+`}]}]}`)
	for _, want := range []string{"event: message_start", `"type":"tool_use"`, `"name":"Bash"`, `\"command\":\"/opt/tk/ready mark\"`, `"stop_reason":"tool_use"`, "event: message_stop"} {
		if !strings.Contains(out, want) {
			t.Errorf("anthropic stream lacks %s:\n%s", want, out)
		}
	}
	// The second step, after one tool result: drain the inbox.
	out = post(t, u+"/v1/messages", `{"model":"m","tools":[{"name":"bash"}],"messages":[{"role":"user","content":`+jsonString(brief)+`},{"role":"assistant","content":[{"type":"tool_use","id":"x","name":"bash","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":"ready=marked"}]}]}`)
	if !strings.Contains(out, `"command":"/opt/tk/inbox"`) {
		t.Errorf("anthropic step 2: %s", out)
	}
	out = post(t, u+"/v1/messages", `{"model":"m","messages":[{"role":"user","content":"write a title"}]}`)
	if !strings.Contains(out, `"type":"text"`) {
		t.Errorf("anthropic without tools: %s", out)
	}

	out = post(t, u+"/v1/responses", `{"model":"m","stream":true,"tools":[{"type":"function","name":"exec_command","parameters":{"properties":{"cmd":{"type":"string"}}}}],"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":`+jsonString(brief)+`}]},{"type":"function_call","call_id":"c"},{"type":"function_call_output","call_id":"c","output":"ok"},{"type":"function_call","call_id":"d"},{"type":"function_call_output","call_id":"d","output":"--- id=7 from=lead to=w1 at=now\nfix it\n"}]}`)
	for _, want := range []string{"event: response.created", "event: response.output_item.done", `"type":"function_call"`, `\"cmd\":\"/opt/tk/inbox send lead -- 'got: fix it'\"`, "event: response.completed"} {
		if !strings.Contains(out, want) {
			t.Errorf("openai stream lacks %s:\n%s", want, out)
		}
	}

	answered := brief + "<<<UNTRUSTED-HUMAN-TEXT BEGIN nonce=1>>>\nnotice\ngreen it's\n<<<UNTRUSTED-HUMAN-TEXT END nonce=1>>>\n"
	results := `{"role":"model","parts":[{"functionCall":{"name":"run_shell_command","args":{}}}]},{"role":"user","parts":[{"functionResponse":{"name":"run_shell_command","response":{"output":"x"}}}]}`
	out = post(t, u+"/v1beta/models/g:streamGenerateContent?alt=sse", `{"tools":[{"functionDeclarations":[{"name":"run_shell_command"}]}],"contents":[{"role":"user","parts":[{"text":`+jsonString(answered)+`}]},`+results+`,`+results+`]}`)
	if !strings.HasPrefix(out, "data: ") || !strings.Contains(out, `"command":"/opt/tk/inbox send lead -- 'answer: green it'\\''s'"`) {
		t.Errorf("gemini stream: %s", out)
	}
	out = post(t, u+"/v1beta/models/g:generateContent", `{"contents":[{"role":"user","parts":[{"text":"route"}]}],"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"object","properties":{"complexity_score":{"type":"integer","minimum":1},"reasoning":{"type":"string"}}}}}`)
	if !strings.Contains(out, `{\"complexity_score\":1,\"reasoning\":\"modeltest\"}`) {
		t.Errorf("gemini router: %s", out)
	}

	reqs := s.Requests()
	if len(reqs) != 6 || reqs[0].Conversation.Briefing != brief || reqs[0].Turn == nil || reqs[2].Turn != nil {
		t.Errorf("log: %+v", reqs)
	}
}

// TestTeamkitEscalates: a first run asks and stops; a run with an answer
// does not ask again.
func TestTeamkitEscalates(t *testing.T) {
	c := Conversation{Briefing: brief, Results: []string{"", "", ""}}
	if got := Teamkit(c); got.Command != `/opt/tk/ask 'Blue or "green"?'` {
		t.Errorf("step 4 = %+v", got)
	}
	c.Briefing += "UNTRUSTED-HUMAN-TEXT BEGIN x\nnotice\ngreen\n"
	if got := Teamkit(c); got.Command != "" || got.Text == "" {
		t.Errorf("step 4 with an answer = %+v", got)
	}
}

// TestFaultsAndUsage: each protocol reports the usage set, and fails with
// 401 or 429 in its vendor's shape, with the reset headers.
func TestFaultsAndUsage(t *testing.T) {
	s, err := New(Teamkit)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetUsage(Usage{Input: 7, Output: 3, CacheRead: 2, CacheWrite: 1})
	out := post(t, s.URL()+"/v1/messages", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	if !strings.Contains(out, `"input_tokens":7`) || !strings.Contains(out, `"cache_creation_input_tokens":1`) {
		t.Errorf("anthropic usage: %s", out)
	}
	out = post(t, s.URL()+"/v1/responses", `{"model":"m","input":[]}`)
	if !strings.Contains(out, `"input_tokens":9`) || !strings.Contains(out, `"cached_tokens":2`) {
		t.Errorf("openai usage (input includes the cached): %s", out)
	}
	if got := s.Reported(); got != (Usage{Input: 14, Output: 6, CacheRead: 4, CacheWrite: 1}) {
		t.Errorf("Reported = %+v", got)
	}

	s.SetFault(&Fault{Status: 429, ResetIn: 20 * time.Second})
	for path, want := range map[string][]string{
		"/v1/messages":                     {"retry-after", "anthropic-ratelimit-requests-reset", "rate_limit_error"},
		"/v1/responses":                    {"x-ratelimit-reset-requests", "rate_limit_exceeded"},
		"/v1beta/models/g:generateContent": {"retry-after", "RESOURCE_EXHAUSTED"},
	} {
		resp, err := http.Post(s.URL()+path, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 429 {
			t.Errorf("%s: status %d", path, resp.StatusCode)
		}
		for _, w := range want {
			if resp.Header.Get(w) == "" && !strings.Contains(string(body), w) {
				t.Errorf("%s: no %s in %v %s", path, w, resp.Header, body)
			}
		}
	}
	s.SetFault(&Fault{Status: 401})
	resp, err := http.Post(s.URL()+"/v1/messages", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	s.SetFault(nil)
	if resp.StatusCode != 401 || s.Reported().Input != 14 {
		t.Errorf("401: status %d, reported %+v", resp.StatusCode, s.Reported())
	}
}
