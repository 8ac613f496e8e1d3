package spawn

import (
	"github.com/urfave/cli/v2"

	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/pkg/agenttype"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

// budgetFlags reads --budget-tokens and --budget-usd.
func budgetFlags(c *cli.Context) (mailbox.Budget, error) {
	var b mailbox.Budget
	if v := c.String("budget-tokens"); v != "" {
		var ok bool
		if b.Tokens, ok = agenttype.ParseBudgetTokens(v); !ok {
			return b, command.Usagef("--budget-tokens %q: expected %s", v, agenttype.BudgetTokensExpected)
		}
	}
	if v := c.String("budget-usd"); v != "" {
		var ok bool
		if b.USD, ok = agenttype.ParseBudgetUSD(v); !ok {
			return b, command.Usagef("--budget-usd %q: expected %s", v, agenttype.BudgetUSDExpected)
		}
	}
	return b, nil
}
