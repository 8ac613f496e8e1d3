package spawn

import (
	"errors"
	"fmt"

	"github.com/teamkit/teamkit/pkg/agenttype"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/runstream"
)

// The team's default budget, from the spawner's environment.
const (
	EnvBudgetTokens = "TEAMKIT_BUDGET_TOKENS"
	EnvBudgetUSD    = "TEAMKIT_BUDGET_USD"
)

// budget is the launch's budget, each limit taken from the first that sets
// it: the request (spawn --budget-tokens / --budget-usd, or the budget a
// re-spawn by resume keeps), the type's type.conf (budget_tokens=,
// budget_usd=), then the team's default in the environment
// (TEAMKIT_BUDGET_TOKENS, TEAMKIT_BUDGET_USD).
//
// A budget is counted from the CLI's stream: a type without one (output=none)
// cannot have one, and the team's default passes it by.
func budget(req Request, conf agenttype.Conf) (mailbox.Budget, error) {
	if conf.Output == "" || conf.Output == runstream.None {
		if req.Budget.Set() || conf.BudgetTokens > 0 || conf.BudgetUSD > 0 {
			return mailbox.Budget{}, errors.New("a budget is counted from the CLI's stream, and this type declares none (output=none)")
		}
		return mailbox.Budget{}, nil
	}
	b := req.Budget
	env := envMap(req.Environ)
	if b.Tokens == 0 {
		b.Tokens = conf.BudgetTokens
	}
	if v := env[EnvBudgetTokens]; b.Tokens == 0 && v != "" {
		var ok bool
		if b.Tokens, ok = agenttype.ParseBudgetTokens(v); !ok {
			return b, fmt.Errorf("%s=%q: expected %s", EnvBudgetTokens, v, agenttype.BudgetTokensExpected)
		}
	}
	if b.USD == 0 {
		b.USD = conf.BudgetUSD
	}
	if v := env[EnvBudgetUSD]; b.USD == 0 && v != "" {
		var ok bool
		if b.USD, ok = agenttype.ParseBudgetUSD(v); !ok {
			return b, fmt.Errorf("%s=%q: expected %s", EnvBudgetUSD, v, agenttype.BudgetUSDExpected)
		}
	}
	return b, nil
}
