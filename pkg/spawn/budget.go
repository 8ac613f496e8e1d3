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
	env := envMap(req.Environ)
	tokens, err := pick(req.Budget.Tokens, conf.BudgetTokens, EnvBudgetTokens, env, agenttype.ParseBudgetTokens, agenttype.BudgetTokensExpected)
	if err != nil {
		return mailbox.Budget{}, err
	}
	usd, err := pick(req.Budget.USD, conf.BudgetUSD, EnvBudgetUSD, env, agenttype.ParseBudgetUSD, agenttype.BudgetUSDExpected)
	return mailbox.Budget{Tokens: tokens, USD: usd}, err
}

// pick is one limit of a budget: the request's, else type.conf's, else the
// environment variable name's (read with parse).
func pick[T int64 | float64](req, conf T, name string, env map[string]string, parse func(string) (T, bool), expected string) (T, error) {
	switch v := env[name]; {
	case req > 0:
		return req, nil
	case conf > 0:
		return conf, nil
	case v != "":
		if n, ok := parse(v); ok {
			return n, nil
		}
		return 0, fmt.Errorf("%s=%q: expected %s", name, v, expected)
	}
	return 0, nil
}
