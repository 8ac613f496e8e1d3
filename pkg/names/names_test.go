package names

import (
	"errors"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	good := []string{"a", "w1", "my-team", "A.b_c-9", strings.Repeat("x", 64)}
	for _, s := range good {
		if err := Check("agent", s); err != nil {
			t.Errorf("Check(%q) = %v, want nil", s, err)
		}
	}
	bad := []string{"", "..", ".hidden", "-x", "a/b", "../etc", "a b", "a;rm", "$(x)", "a`b`", "é", "a\nb", strings.Repeat("x", 65), "_x"}
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
