package escalate

import "testing"

// TestParseDecisionHiddenAfterClosedComment: a line that closes one HTML
// comment and opens another ("<!-- a --> and <!--") leaves the next lines
// inside a comment, which GitHub does not render (CommonMark inline raw HTML
// may span lines). docs/SECURITY.md: lines in HTML comments, "which a reader
// of the page cannot see", never decide.
func TestParseDecisionHiddenAfterClosedComment(t *testing.T) {
	for _, body := range []string{
		// inline comment spanning lines, opened after a closed one
		"Looks good <!-- a --> but let me check <!--\n/approve\n-->",
		// a block comment whose closing line opens another
		"<!--\nnote\n--> <!--\n/approve\n-->",
	} {
		if d, r, ok := ParseDecision(body); ok {
			t.Errorf("ParseDecision(%q) = %q, %q, true; want no decision: the /approve line is inside an HTML comment", body, d, r)
		}
	}
}

// TestParseDecisionLazyQuote: in Markdown a line right after a quoted
// paragraph line is a lazy continuation of the quote (CommonMark
// "laziness": "> bar\nbaz" is one block quote). docs/SECURITY.md: quoted
// lines don't count.
func TestParseDecisionLazyQuote(t *testing.T) {
	body := "> mallory wrote: please type the following\n/approve\n\nI will look at it tomorrow."
	if d, r, ok := ParseDecision(body); ok {
		t.Errorf("ParseDecision(%q) = %q, %q, true; want no decision: the /approve line renders inside the quote", body, d, r)
	}
}

// TestParseDecisionLazyQuoteHidden: a quoted line still has its lazy
// continuation when it holds an HTML comment (the comment hides on the page,
// the quote stays), when a comment spans its lines, and when the quote sits
// in a list item ("- > …"): in each, the /approve line renders inside the
// quote, so it decides nothing. docs/SECURITY.md: quoted lines don't count,
// nor does a line that continues a quote.
func TestParseDecisionLazyQuoteHidden(t *testing.T) {
	quoteHides(t, []string{
		// mallory's text, lazily quoted: an HTML comment on its first line
		"> mallory wrote: please type <!-- x --> the following\n/approve\n\nI will look at it tomorrow.",
		// a comment that spans two quoted lines
		"> mallory wrote: please type <!--\n> x --> the following\n/approve",
		// a quote in a list item, bulleted or numbered
		"- > mallory wrote: please type the following\n/approve",
		"1. > mallory wrote: please type the following\n/approve",
		"  * 2) > mallory wrote: please type the following\n/approve",
	}, []string{
		// What is not a quote still decides: a list item's own text, and
		// a line after a quote's blank line.
		"- checked the plan\n\n/approve",
		"> mallory wrote: please type <!-- x --> the following\n\n/approve",
		"-> not a quote\n/approve",
	})
}

// TestParseDecisionQuoteInListContinuation: a list item's content sits at
// its content column (two for "- ", four for "10. ", more for a nested
// item), so a quote on one of its continuation lines may be indented past
// three spaces and still be a quote (CommonMark: "- a\n    > b" is a block
// quote inside the item), and the line after it continues the quote lazily.
func TestParseDecisionQuoteInListContinuation(t *testing.T) {
	quoteHides(t, []string{
		"- I read this:\n    > mallory wrote: please type the following\n/approve",
		"10. I read this:\n    > mallory wrote: please type the following\n/approve",
		"- outer\n  - inner\n    > mallory wrote: please type the following\n/approve",
		"- I read this:\n\n    > mallory wrote: please type the following\n/approve",
		"-\tI read this:\n\t> mallory wrote: please type the following\n/approve",
	}, []string{
		// Outside a list, four spaces make a code block, which nothing
		// continues lazily: the /approve after it is the decider's own.
		"    > an indented code block\n/approve",
		"- a list that ended\n\nA paragraph.\n/approve",
	})
}

// quoteHides checks that each of hidden decides nothing (its /approve line
// renders inside a quote; docs/SECURITY.md: quoted lines don't count, nor
// does a line that continues a quote) and each of shown approves.
func quoteHides(t *testing.T, hidden, shown []string) {
	t.Helper()
	for _, body := range hidden {
		if d, r, ok := ParseDecision(body); ok {
			t.Errorf("ParseDecision(%q) = %q, %q, true; want no decision: the /approve line renders inside the quote", body, d, r)
		}
	}
	for _, body := range shown {
		if _, _, ok := ParseDecision(body); !ok {
			t.Errorf("ParseDecision(%q) decided nothing; want approved", body)
		}
	}
}
