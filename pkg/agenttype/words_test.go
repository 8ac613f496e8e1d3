package agenttype

import (
	"reflect"
	"strings"
	"testing"
)

func TestSplitWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"   \t ", nil},
		{"codex exec -", []string{"codex", "exec", "-"}},
		{"  a \t b  ", []string{"a", "b"}},
		{`a 'b c' d`, []string{"a", "b c", "d"}},
		{`'$HOME' "$HOME" $HOME ~ *.go`, []string{"$HOME", "$HOME", "$HOME", "~", "*.go"}},
		{`"a\"b" "a\\b" "a\$b" "a\` + "`" + `b"`, []string{`a"b`, `a\b`, `a$b`, "a`b"}},
		{`"a\nb" "a\'b"`, []string{`a\nb`, `a\'b`}},
		{`'a\b'`, []string{`a\b`}},
		{`a\ b \'x \"y \\z`, []string{"a b", "'x", `"y`, `\z`}},
		{`x'y'"z"w`, []string{"xyzw"}},
		{`'' "" x`, []string{"", "", "x"}},
		{`"it's"`, []string{"it's"}},
		{`'say "hi"'`, []string{`say "hi"`}},
		{`$(rm -rf /) ;|&<>`, []string{"$(rm", "-rf", "/)", ";|&<>"}},
		{`{prompt} "--x={name}"`, []string{"{prompt}", "--x={name}"}},
		{"é 'ü ñ'", []string{"é", "ü ñ"}},
	}
	for _, tt := range tests {
		got, err := SplitWords(tt.in)
		if err != nil {
			t.Errorf("SplitWords(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitWords(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSplitWordsErrors(t *testing.T) {
	for _, in := range []string{`'abc`, `a "b`, `"a\"`, `x\`, `'`, `"`} {
		if got, err := SplitWords(in); err == nil {
			t.Errorf("SplitWords(%q) = %q, want an error", in, got)
		}
	}
}

// quote is the single-quote quoter: every byte literal, ' closed, escaped and
// reopened.
func quote(w string) string {
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

func FuzzSplitWords(f *testing.F) {
	for _, s := range []string{"", "a b", `'x y' "z\"" \w`, `"unterminated`, "{prompt}", "a\tb\nc", `'it'\''s'`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := SplitWords(s)
		if err != nil {
			return
		}
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = quote(w)
		}
		again, err := SplitWords(strings.Join(quoted, " "))
		if err != nil {
			t.Fatalf("re-splitting quoted %q: %v", words, err)
		}
		if len(words) == 0 && len(again) == 0 {
			return
		}
		if !reflect.DeepEqual(again, words) {
			t.Fatalf("round trip of %q gave %q", words, again)
		}
	})
}
