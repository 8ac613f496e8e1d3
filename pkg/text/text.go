// Package text shortens human text for one-line display: the first line of a
// message or question in a table, and an error or a reply folded onto one
// line for a log, a warning or a stored note. Every command shows text the
// same way because they all cut it here.
//
// Public: a Go program embedding teamkit may import this package.
package text

import (
	"strings"
	"unicode/utf8"
)

// FirstLine is the first line of s (up to the first CR or LF), cut to max
// runes with a trailing "…" (max 0: no cut).
func FirstLine(s string, max int) string {
	// Two scans for one byte each are quicker than one for either.
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if i := strings.IndexByte(s, '\r'); i >= 0 {
		s = s[:i]
	}
	if max <= 0 || len(s) <= max {
		return s // no more characters than bytes
	}
	// Counted in place: stale and spawn list cut a line per row, and
	// converting each to runes allocated four bytes a character.
	n, cut := 0, 0
	for i := range s {
		if n == max-1 {
			cut = i
		}
		if n == max {
			return s[:cut] + "…"
		}
		n++
	}
	return s
}

// OneLine folds every run of white space in s, newlines included, into one
// space, so a wrapped error or a multi-line reply stays on one line.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Width is how many terminal columns s takes: a character of the East
// Asian wide and fullwidth ranges (CJK, Hangul, kana, fullwidth forms,
// most emoji) takes two, any other one. The tables pad their cells by it,
// so a question in Chinese does not push the columns after it out of line.
func Width(s string) int {
	ascii := true
	for i := 0; i < len(s) && ascii; i++ {
		ascii = s[i] < utf8.RuneSelf
	}
	if ascii { // most cells: one column a byte
		return len(s)
	}
	n := 0
	for _, r := range s {
		n++
		if wide(r) {
			n++
		}
	}
	return n
}

// wide reports whether r is East Asian wide or fullwidth (after Markus
// Kuhn's wcwidth).
func wide(r rune) bool {
	return r >= 0x1100 && (r <= 0x115f || r == 0x2329 || r == 0x232a ||
		(r >= 0x2e80 && r <= 0xa4cf && r != 0x303f) ||
		(r >= 0xac00 && r <= 0xd7a3) ||
		(r >= 0xf900 && r <= 0xfaff) ||
		(r >= 0xfe30 && r <= 0xfe6f) ||
		(r >= 0xff00 && r <= 0xff60) ||
		(r >= 0xffe0 && r <= 0xffe6) ||
		(r >= 0x1f300 && r <= 0x1f64f) ||
		(r >= 0x1f900 && r <= 0x1f9ff) ||
		(r >= 0x20000 && r <= 0x3fffd))
}
