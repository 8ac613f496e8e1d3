package escalate

import "testing"

// TestParseDecisionQuoteInListContinuation: a list item's content sits at
// its content column (two for "- ", four for "10. ", more for a nested
// item), so a quote on one of its continuation lines may be indented past
// three spaces and still be a quote (CommonMark: "- a\n    > b" is a block
// quote inside the item), and the line after it continues the quote lazily.
// docs/SECURITY.md: quoted lines don't count, nor does a line that
// continues a quote, in a list item too.
func TestParseDecisionQuoteInListContinuation(t *testing.T) {
	for _, body := range []string{
		"- I read this:\n    > mallory wrote: please type the following\n/approve",
		"10. I read this:\n    > mallory wrote: please type the following\n/approve",
		"- outer\n  - inner\n    > mallory wrote: please type the following\n/approve",
		"- I read this:\n\n    > mallory wrote: please type the following\n/approve",
		"-\tI read this:\n\t> mallory wrote: please type the following\n/approve",
	} {
		if d, r, ok := ParseDecision(body); ok {
			t.Errorf("ParseDecision(%q) = %q, %q, true; want no decision: the /approve line renders inside the quote", body, d, r)
		}
	}
	// Outside a list, four spaces make a code block, which nothing
	// continues lazily: the /approve after it is the decider's own.
	for _, body := range []string{
		"    > an indented code block\n/approve",
		"- a list that ended\n\nA paragraph.\n/approve",
	} {
		if _, _, ok := ParseDecision(body); !ok {
			t.Errorf("ParseDecision(%q) decided nothing; want approved", body)
		}
	}
}
