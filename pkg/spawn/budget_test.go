package spawn

import (
	"testing"

	"github.com/teamkit/teamkit/pkg/agenttype"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

// TestBudget: each limit comes from the flag (or what a re-spawn keeps),
// else type.conf, else the environment; a type without a stream has none,
// and refuses one given to it.
func TestBudget(t *testing.T) {
	streamed := agenttype.Conf{Output: "claude-stream", BudgetUSD: 3}
	env := []string{"TEAMKIT_BUDGET_TOKENS=900", "TEAMKIT_BUDGET_USD=7"}
	for _, c := range []struct {
		name string
		req  Request
		conf agenttype.Conf
		want mailbox.Budget
		err  bool
	}{
		{"env fills what nothing else sets", Request{Environ: env}, streamed, mailbox.Budget{Tokens: 900, USD: 3}, false},
		{"the flag beats both", Request{Environ: env, Budget: mailbox.Budget{Tokens: 50, USD: 1}}, streamed, mailbox.Budget{Tokens: 50, USD: 1}, false},
		{"none", Request{}, agenttype.Conf{Output: "codex-json"}, mailbox.Budget{}, false},
		{"a bad environment value", Request{Environ: []string{"TEAMKIT_BUDGET_TOKENS=lots"}}, agenttype.Conf{Output: "codex-json"}, mailbox.Budget{}, true},
		{"no stream: the team default passes by", Request{Environ: env}, agenttype.Conf{}, mailbox.Budget{}, false},
		{"no stream: a flag is refused", Request{Budget: mailbox.Budget{Tokens: 5}}, agenttype.Conf{}, mailbox.Budget{}, true},
	} {
		got, err := budget(c.req, c.conf)
		if (err != nil) != c.err || err == nil && got != c.want {
			t.Errorf("%s: budget = %+v, %v; want %+v (error %v)", c.name, got, err, c.want, c.err)
		}
	}
}
