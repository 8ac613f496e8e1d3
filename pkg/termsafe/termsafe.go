// Package termsafe makes text written by agents and humans safe to show on a
// terminal. A message body, a question or an answer is written by someone
// else: printed raw on a terminal, an escape sequence in it can clear the
// screen, set the window title, rewrite what was printed before it, or (a
// bidi control such as U+202E) make the text read differently from the
// bytes. Escape shows every such character visibly instead, the way gh does,
// so what a person reads is what was sent; pipes and files still get the
// bytes, and JSON gets them escaped (EscapeJSON).
package termsafe

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Bidi reports whether r is a Unicode bidirectional formatting control:
// the embeddings and overrides U+202A–U+202E, the isolates U+2066–U+2069,
// and the marks U+200E, U+200F and U+061C.
func Bidi(r rune) bool {
	switch {
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return r == 0x200e || r == 0x200f || r == 0x061c
}

// unsafe reports whether r must not reach a terminal as itself. Newline and
// tab are layout, not control; everything else below space, DEL, the C1
// controls (U+0080–U+009F: 0x9b is a one-byte CSI on some terminals) and the
// bidi controls are escaped.
func unsafe(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f:
		return true
	}
	return Bidi(r)
}

// Escape returns s with every control character, escape sequence
// introducer and bidi control shown visibly: C0 controls in caret notation
// (ESC is ^[, BEL is ^G, CR is ^M), DEL as ^?, C1 and bidi controls as
// \u009b or \u202e. Newlines and tabs are kept. Text with nothing to escape
// is returned unchanged (no allocation).
func Escape(s string) string {
	i := strings.IndexFunc(s, unsafe)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for _, r := range s[i:] {
		switch {
		case !unsafe(r):
			b.WriteRune(r)
		case r < 0x20:
			b.WriteByte('^')
			b.WriteByte(byte(r) + '@')
		case r == 0x7f:
			b.WriteString("^?")
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// EscapeJSON rewrites the C1 and bidi controls in encoded JSON as \uXXXX
// escapes. encoding/json already escapes the C0 controls, but passes U+009B
// (a one-byte CSI to some terminals) and U+202E and its kin through raw, so
// a terminal showing the JSON would still act on them. Outside strings JSON
// holds only ASCII, so this never changes the value.
func EscapeJSON(js []byte) []byte {
	if !hasUnsafe(js) {
		return js
	}
	out := make([]byte, 0, len(js)+16)
	for len(js) > 0 {
		r, n := utf8.DecodeRune(js)
		if r >= 0x80 && unsafe(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, js[:n]...)
		}
		js = js[n:]
	}
	return out
}

// hasUnsafe is the fast path: in UTF-8 every C1 control starts with 0xC2,
// U+061C with 0xD8 and the other bidi controls with 0xE2, so most JSON is
// skipped without decoding.
func hasUnsafe(js []byte) bool {
	for i := 0; i < len(js); i++ {
		if c := js[i]; c == 0xc2 || c == 0xd8 || c == 0xe2 {
			r, _ := utf8.DecodeRune(js[i:])
			if unsafe(r) {
				return true
			}
		}
	}
	return false
}
