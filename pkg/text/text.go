// Package text shortens human text for one-line display: the first line of a
// message or question in a table, and an error or a reply folded onto one
// line for a log, a warning or a stored note. Every command shows text the
// same way because they all cut it here.
//
// Public: a Go program embedding teamkit may import this package.
package text

import "strings"

// FirstLine is the first line of s (up to the first CR or LF), cut to max
// runes with a trailing "…" (max 0: no cut).
func FirstLine(s string, max int) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
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
