package launch

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teamkit/teamkit/pkg/runstream"
)

// claudeEvents is n events of a claude stream-json run, in the shapes the
// CLI writes them: an assistant message calling Bash, its tool result, an
// assistant text, each with its usage.
func claudeEvents(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"system","subtype":"init","session_id":"a7c3fe85-1566-4488-a41b-ca9c1268951f","model":"claude"}` + "\n")
	for i := 1; i < n; i++ {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, `{"type":"assistant","message":{"content":[{"id":"toolu_%d","input":{"command":"/usr/local/bin/inbox t w1","description":"Run a teamkit command"},"name":"Bash","type":"tool_use"}],"id":"msg_%d","model":"claude-opus","role":"assistant","usage":{"cache_creation_input_tokens":200,"cache_read_input_tokens":300,"input_tokens":1000,"output_tokens":50}},"session_id":"a7c3fe85-1566-4488-a41b-ca9c1268951f"}`+"\n", i, i)
		case 1:
			fmt.Fprintf(&b, `{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_%d","type":"tool_result","content":"--- id=%d from=lead to=w1 at=2026-12-04T03:08:53Z\nfix the flaky test in pkg/x\n","is_error":false}]},"session_id":"a7c3fe85-1566-4488-a41b-ca9c1268951f"}`+"\n", i-1, i)
		default:
			fmt.Fprintf(&b, `{"type":"assistant","message":{"content":[{"text":"Step %d done; the test passes now and I will report it.","type":"text"}],"id":"msg_%d","model":"claude-opus","role":"assistant","usage":{"cache_creation_input_tokens":200,"cache_read_input_tokens":300,"input_tokens":1000,"output_tokens":50}},"session_id":"a7c3fe85-1566-4488-a41b-ca9c1268951f"}`+"\n", i, i)
		}
	}
	return b.Bytes()
}

// TestStream: the supervisor's reading of a stream writes text to the log
// and the raw lines beside it, and counts every event.
func TestStream(t *testing.T) {
	dir := t.TempDir()
	spec := Spec{Output: runstream.Claude, Log: filepath.Join(dir, "r1.log")}
	var text bytes.Buffer
	in := claudeEvents(30)
	s := readStream(spec, bytes.NewReader(append(in, "not json\n"...)), &text)
	<-s.done
	if s.r.Events != 30 || s.r.Session == "" || s.r.Tokens.Input != 19000 {
		t.Errorf("events %d, session %q, tokens %+v", s.r.Events, s.r.Session, s.r.Tokens)
	}
	for _, want := range []string{"$ /usr/local/bin/inbox t w1\n", "fix the flaky test in pkg/x\n", "Step 2 done", "not json\n"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if strings.Contains(text.String(), `{"type"`) {
		t.Errorf("text holds JSON")
	}
	raw, err := os.ReadFile(StreamPath(spec.Log))
	if err != nil || !bytes.Equal(raw, append(in, "not json\n"...)) {
		t.Errorf("raw stream kept: %v, %d bytes of %d", err, len(raw), len(in)+9)
	}
}
