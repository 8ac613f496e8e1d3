package launch

import (
	"bytes"
	"strings"
	"testing"

	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/runstream"
)

// TestBudgetUSDExactlyReached: opencode reports each step's cost; ten steps
// of $0.10 are $1.00, which reaches a budget of $1 (README: "the run reached
// its budget"). Summed in float64 they make 0.9999999999999999, and the
// supervisor lets the run go on, while spawn runs shows COST $1.0000.
func TestBudgetUSDExactlyReached(t *testing.T) {
	var in bytes.Buffer
	for i := 0; i < 10; i++ {
		in.WriteString(`{"type":"step_finish","sessionID":"ses_1","part":{"type":"step-finish","tokens":{"input":10,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.1}}` + "\n")
	}
	spec := Spec{Output: runstream.OpenCode, Budget: mailbox.Budget{USD: 1}}
	s := readStream(spec, strings.NewReader(in.String()), &bytes.Buffer{})
	<-s.done
	select {
	case <-s.over:
	default:
		t.Errorf("a run that cost $%.4f (%v) did not reach its budget of $1", *s.r.CostUSD, *s.r.CostUSD)
	}
}
