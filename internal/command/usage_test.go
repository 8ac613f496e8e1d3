package command

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestUsageRedactsTrimmedURL: a parser quotes what it read, trimmed of
// blanks ("alice, postgres://…" is a natural list; ParseDuration trims
// its value), so a URL typed with a blank beside it is still shown
// without its password, in UsageOf's message and in a bad flag value's.
func TestUsageRedactsTrimmedURL(t *testing.T) {
	const url = "postgres://u:CANARYpw@db.invalid/teamkit"
	err := UsageOf(fmt.Errorf("--deciders: deciders list: %q is not a GitHub login", url), strings.Split("alice, "+url, ",")...)
	if strings.Contains(err.Error(), "CANARYpw") || !strings.Contains(err.Error(), "postgres://u@db.invalid/teamkit") {
		t.Errorf("UsageOf: %q, want the URL without its password", err)
	}
	if ee := new(Error); !errors.As(err, &ee) || ee.Code != ExitUsage {
		t.Errorf("UsageOf: %v, want a usage error", err)
	}
	for _, typed := range []string{" " + url, url + " ", "\t" + url + "\n"} {
		_, perr := ParseDuration(typed)
		msg := fmt.Sprintf("invalid value %q for flag -interval: %v", typed, perr)
		m := invalidValue().FindStringSubmatch(msg)
		if m == nil {
			t.Fatalf("%q does not read as a bad flag value", msg)
		}
		if err := badFlagValue(nil, m[1], m[2], m[3]); strings.Contains(err.Error(), "CANARYpw") {
			t.Errorf("badFlagValue(%q): %q holds the password", typed, err)
		}
	}
}
