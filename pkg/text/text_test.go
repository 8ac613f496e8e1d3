package text

import "testing"

func TestFirstLine(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{"one\ntwo", 0, "one"},
		{"one\r\ntwo", 0, "one"},
		{"cr\rthen", 0, "cr"},
		{"héllo wörld", 5, "héll…"},
		{"short", 5, "short"},
		{"", 3, ""},
		{"abcd", 3, "ab…"},
		{"abc", 3, "abc"},
		{"ab", 1, "…"},
		{"日本語のテキスト", 4, "日本語…"},
	} {
		if got := FirstLine(c.in, c.max); got != c.want {
			t.Errorf("FirstLine(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
}

func TestOneLine(t *testing.T) {
	if got := OneLine(" a\n\tb  c\r\n"); got != "a b c" {
		t.Errorf("OneLine = %q", got)
	}
}
