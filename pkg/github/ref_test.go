package github

import (
	"strings"
	"testing"
)

func TestParseIssueRef(t *testing.T) {
	good := map[string]IssueRef{
		"octo/repo#12":                   {"octo", "repo", 12},
		"a.b_c-d/R.e_p-o#1":              {"a.b_c-d", "R.e_p-o", 1},
		"o/r#2147483647":                 {"o", "r", 2147483647},
		"cli/go-gh#9":                    {"cli", "go-gh", 9},
		"x/.github#3":                    {"x", ".github", 3},
		strings.Repeat("o", 39) + "/r#1": {strings.Repeat("o", 39), "r", 1},
	}
	for in, want := range good {
		got, err := ParseIssueRef(in)
		if err != nil || got != want {
			t.Errorf("ParseIssueRef(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if got.String() != in {
			t.Errorf("String() = %q, want %q", got.String(), in)
		}
	}
	bad := []string{
		"", "octo/repo", "octo/repo#", "octo/repo#0", "octo/repo#-1", "octo/repo#+1", "octo/repo#01",
		"octo/repo#1x", "octo/repo#1 ", " octo/repo#1", "octo#1", "/repo#1", "octo/#1", "octo/re/po#1",
		"../repo#1", "octo/..#1", "./r#1", "oc to/repo#1", "octo/repo#1#2", "octo/rep\no#1", "ocTö/repo#1",
		"octo/repo#99999999999999999999", "octo/repo#2147483648", strings.Repeat("o", 40) + "/r#1",
		"o/" + strings.Repeat("r", 101) + "#1", "https://github.com/octo/repo/issues/1",
	}
	for _, in := range bad {
		if got, err := ParseIssueRef(in); err == nil {
			t.Errorf("ParseIssueRef(%q) = %+v, want error", in, got)
		} else if !strings.Contains(err.Error(), "owner/repo#N") {
			t.Errorf("ParseIssueRef(%q) error %q does not show the expected form", in, err)
		}
	}
}

func TestIssueRefValidate(t *testing.T) {
	if err := (IssueRef{"o", "r", 1}).validate(); err != nil {
		t.Error(err)
	}
	for _, r := range []IssueRef{{"", "r", 1}, {"o", "", 1}, {"o", "r", 0}, {"o/x", "r", 1}, {"..", "r", 1}, {"o", "r?x=1", 1}} {
		if err := r.validate(); err == nil {
			t.Errorf("validate(%+v) passed", r)
		}
	}
}
