package agenttype

import (
	"math"
	"strconv"
)

// BudgetTokensExpected and BudgetUSDExpected say what a budget value must
// be, for type.conf's budget_tokens= and budget_usd= and the environment's
// TEAMKIT_BUDGET_TOKENS and TEAMKIT_BUDGET_USD.
const (
	BudgetTokensExpected = "a whole number of tokens above 0"
	BudgetUSDExpected    = "an amount of US dollars above 0, like 2.50"
)

// ParseBudgetTokens reads a token budget; ok is false when value is not
// BudgetTokensExpected.
func ParseBudgetTokens(value string) (n int64, ok bool) {
	n, err := strconv.ParseInt(value, 10, 64)
	return n, err == nil && n > 0
}

// ParseBudgetUSD reads a budget in US dollars; ok is false when value is
// not BudgetUSDExpected.
func ParseBudgetUSD(value string) (usd float64, ok bool) {
	usd, err := strconv.ParseFloat(value, 64)
	return usd, err == nil && usd > 0 && !math.IsInf(usd, 0)
}
