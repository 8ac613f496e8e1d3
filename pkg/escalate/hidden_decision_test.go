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
