package github

import (
	"fmt"
	"strconv"
	"strings"
)

// Limits on the parts of an issue reference. GitHub allows owners of up to 39
// characters and repository names of up to 100; anything longer cannot exist.
const (
	maxOwnerLen = 39
	maxRepoLen  = 100
)

// IssueRef names one GitHub issue (or pull request): owner/repo#number.
type IssueRef struct {
	Owner  string
	Repo   string
	Number int
}

// ParseIssueRef parses "owner/repo#N" strictly: owner and repo use only
// [A-Za-z0-9._-] (and are neither "." nor ".."), and N is a positive decimal
// number without sign or leading zeros. Nothing else is accepted, so a
// reference can be put into a URL path without further escaping concerns.
func ParseIssueRef(s string) (IssueRef, error) {
	bad := func(why string) (IssueRef, error) {
		return IssueRef{}, fmt.Errorf("invalid issue reference %q: %s (want owner/repo#N)", s, why)
	}
	repoPart, numPart, ok := strings.Cut(s, "#")
	if !ok {
		return bad("missing #N")
	}
	owner, repo, ok := strings.Cut(repoPart, "/")
	if !ok {
		return bad("missing / between owner and repo")
	}
	if err := checkName("owner", owner, maxOwnerLen); err != nil {
		return bad(err.Error())
	}
	if err := checkName("repo", repo, maxRepoLen); err != nil {
		return bad(err.Error())
	}
	n, err := parseNumber(numPart)
	if err != nil {
		return bad(err.Error())
	}
	return IssueRef{Owner: owner, Repo: repo, Number: n}, nil
}

// String formats the reference as owner/repo#N.
func (r IssueRef) String() string {
	return fmt.Sprintf("%s/%s#%d", r.Owner, r.Repo, r.Number)
}

// validate reports whether r could have come from ParseIssueRef; methods call
// it so a hand-built IssueRef cannot smuggle path segments into a URL.
func (r IssueRef) validate() error {
	if err := checkName("owner", r.Owner, maxOwnerLen); err != nil {
		return fmt.Errorf("invalid issue reference %s: %w", r, err)
	}
	if err := checkName("repo", r.Repo, maxRepoLen); err != nil {
		return fmt.Errorf("invalid issue reference %s: %w", r, err)
	}
	if r.Number <= 0 {
		return fmt.Errorf("invalid issue reference %s: issue number must be positive", r)
	}
	return nil
}

func checkName(what, s string, max int) error {
	switch {
	case s == "":
		return fmt.Errorf("empty %s", what)
	case len(s) > max:
		return fmt.Errorf("%s longer than %d characters", what, max)
	case s == "." || s == "..":
		return fmt.Errorf("%s cannot be %q", what, s)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("%s contains %q; only letters, digits, '.', '_' and '-' are allowed", what, rune(c))
		}
	}
	return nil
}

// parseNumber's errors do not quote s: ParseIssueRef's quote the whole
// reference, which the commands show without a URL's password; the part
// after '#' alone (o/r#https://user:token@…) they would show as it is.
func parseNumber(s string) (int, error) {
	if s == "" {
		return 0, fmt.Errorf("empty issue number")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("issue number is not a positive decimal number")
		}
	}
	if s[0] == '0' {
		return 0, fmt.Errorf("issue number must be positive without leading zeros")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > 1<<31-1 {
		return 0, fmt.Errorf("issue number is out of range")
	}
	return n, nil
}
