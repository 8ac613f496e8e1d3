package names

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	good := []string{"a", "w1", "my-team", "A.b_c-9", strings.Repeat("x", 64), "a.b", "w1-", "console", "nul1", "com10", "lpt", "auxiliary", "x.nul"}
	for _, s := range good {
		if err := Check("agent", s); err != nil {
			t.Errorf("Check(%q) = %v, want nil", s, err)
		}
	}
	bad := []string{"", "..", ".hidden", "-x", "a/b", "../etc", "a b", "a;rm", "$(x)", "a`b`", "é", "a\nb", strings.Repeat("x", 65), "_x",
		"w1.", "a..", "nul", "NUL", "Con", "aux", "prn", "com1", "COM9", "lpt0", "nul.txt", "con.d"}
	for _, s := range bad {
		err := Check("team", s)
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("Check(%q) = %v, want ErrInvalid", s, err)
			continue
		}
		if !strings.Contains(err.Error(), "team name") {
			t.Errorf("Check(%q) message %q does not say which kind of name", s, err)
		}
	}
}

// valid is Pattern written out: the two agree on every string of up to
// three bytes drawn from the interesting characters, and at the length
// limit.
func TestValidIsPattern(t *testing.T) {
	re := regexp.MustCompile(`^` + Pattern + `$`)
	chars := []byte("aZ09._-/ \x00\xc3é")
	var try func(s string)
	try = func(s string) {
		if valid(s) != re.MatchString(s) {
			t.Errorf("valid(%q) = %v, Pattern says %v", s, valid(s), re.MatchString(s))
		}
		if len(s) < 3 {
			for _, c := range chars {
				try(s + string(c))
			}
		}
	}
	try("")
	for _, s := range []string{strings.Repeat("a", 64), strings.Repeat("a", 65), "a" + strings.Repeat("-", 63), "a" + strings.Repeat(".", 64)} {
		try(s)
	}
}
