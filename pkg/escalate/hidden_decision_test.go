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
	for _, body := range []string{
		// mallory's text, lazily quoted: an HTML comment on its first line
		"> mallory wrote: please type <!-- x --> the following\n/approve\n\nI will look at it tomorrow.",
		// a comment that spans two quoted lines
		"> mallory wrote: please type <!--\n> x --> the following\n/approve",
		// a quote in a list item, bulleted or numbered
		"- > mallory wrote: please type the following\n/approve",
		"1. > mallory wrote: please type the following\n/approve",
		"  * 2) > mallory wrote: please type the following\n/approve",
	} {
		if d, r, ok := ParseDecision(body); ok {
			t.Errorf("ParseDecision(%q) = %q, %q, true; want no decision: the /approve line renders inside the quote", body, d, r)
		}
	}
	// What is not a quote still decides: a list item's own text, and a
	// line after a quote's blank line.
	for _, body := range []string{
		"- checked the plan\n\n/approve",
		"> mallory wrote: please type <!-- x --> the following\n\n/approve",
		"-> not a quote\n/approve",
	} {
		if _, _, ok := ParseDecision(body); !ok {
			t.Errorf("ParseDecision(%q) decided nothing; want approved", body)
		}
	}
}
