// Package termsafe makes text written by agents and humans safe to show on a
// terminal. A message body, a question or an answer is written by someone
// else: printed raw on a terminal, an escape sequence in it can clear the
// screen, set the window title, rewrite what was printed before it, or (a
// bidi control such as U+202E) make the text read differently from the
// bytes. Escape shows every such character visibly instead, the way gh does,
// so what a person reads is what was sent; pipes and files still get the
// bytes, and JSON gets them escaped (EscapeJSON).
//
// Public: a Go program embedding teamkit may import this package.
package termsafe

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
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
// bidi controls are escaped. So is what shows nothing yet is there: the
// invisible format characters (U+200B zero width space, U+2060 word joiner,
// U+FEFF, the soft hyphen, the tag characters U+E0000–U+E007F that can spell
// out a hidden text), the line and paragraph separators U+2028 and U+2029,
// the variation selectors (U+FE00–U+FE0F and the supplementary
// U+E0100–U+E01EF: a run of them after one visible character carries hidden
// bytes, one per selector), the combining grapheme joiner U+034F and the
// Hangul fillers (U+115F, U+1160, U+3164, U+FFA0), which are letters that
// draw as blank space. An emoji's presentation selector U+FE0F is shown
// escaped too: the emoji still reads, and a hidden payload cannot hide in
// it. The zero width joiner and non-joiner stay: emoji sequences and
// several scripts are written with them.
func unsafe(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f:
		return true
	case r < 0x80:
		return false
	case r <= 0x9f:
		return true
	case r == 0x200c || r == 0x200d:
		return false
	case r == 0x2028 || r == 0x2029, r >= 0xfe00 && r <= 0xfe0f, r >= 0xe0100 && r <= 0xe01ef:
		return true
	case r == 0x034f, r == 0x115f || r == 0x1160, r == 0x3164, r == 0xffa0:
		return true
	}
	return Bidi(r) || unicode.Is(unicode.Cf, r)
}

// Escape returns s with every control character, escape sequence
// introducer, bidi control and invisible character shown visibly: C0
// controls in caret notation (ESC is ^[, BEL is ^G, CR is ^M), DEL as ^?,
// the others as \u009b, \u202e or \U000e0041, and a byte that is not UTF-8
// as \x9b (a lone 0x9b is a CSI to a terminal not in UTF-8 mode). Newlines
// and tabs are kept. Text with nothing to escape is returned unchanged (no
// allocation).
func Escape(s string) string {
	i := strings.IndexFunc(s, unsafe)
	if i < 0 && utf8.ValidString(s) {
		return s
	}
	if i < 0 || !utf8.ValidString(s[:i]) {
		i = 0
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for s = s[i:]; s != ""; {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case !unsafe(r):
			b.WriteString(s[:n])
		case r < 0x20:
			b.WriteByte('^')
			b.WriteByte(byte(r) + '@')
		case r == 0x7f:
			b.WriteString("^?")
		case r > 0xffff:
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		s = s[n:]
	}
	return b.String()
}

// EscapeJSON rewrites the characters Escape shows escaped, but for the C0
// controls, in encoded JSON as \uXXXX escapes (a surrogate pair above
// U+FFFF). encoding/json already escapes the C0 controls (and U+2028,
// U+2029), but passes U+009B (a one-byte CSI to some terminals), U+202E and
// its kin and the invisible characters through raw, so a terminal showing
// the JSON would still act on them or hide them. Outside strings JSON holds
// only ASCII, so this never changes the value.
func EscapeJSON(js []byte) []byte {
	if !hasUnsafe(js) {
		return js
	}
	out := make([]byte, 0, len(js)+16)
	for len(js) > 0 {
		r, n := utf8.DecodeRune(js)
		switch {
		case r < 0x80 || !unsafe(r):
			out = append(out, js[:n]...)
		case r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, hi, lo)
		default:
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		js = js[n:]
	}
	return out
}

// hasUnsafe is the fast path: JSON that is all ASCII (most of it) has
// nothing to rewrite and is skipped without decoding.
func hasUnsafe(js []byte) bool {
	for i := 0; i < len(js); i++ {
		if js[i] >= 0x80 {
			for _, r := range string(js[i:]) {
				if r >= 0x80 && unsafe(r) {
					return true
				}
			}
			return false
		}
	}
	return false
}
