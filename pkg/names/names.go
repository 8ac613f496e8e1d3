// Package names validates the team, agent and type names that teamkit turns
// into file paths, database keys, tmux targets and environment values. A name
// is checked before it reaches any of those, so a hostile or mistyped name is
// refused with one clear line instead of escaping a directory or a shell.
//
// Public: a Go program embedding teamkit may import this package.
package names

import (
	"errors"
	"fmt"
)

// Pattern is the whole grammar of a name, as the README documents it.
const Pattern = `[A-Za-z0-9][A-Za-z0-9._-]{0,63}`

// valid matches Pattern. It is written out rather than compiled from
// Pattern: every command checks a name, and compiling the regexp was the
// costliest package initializer of every run (861 allocations).
// TestValidIsPattern holds the two together.
func valid(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return true
}

// ErrInvalid is wrapped by every error Check returns.
var ErrInvalid = errors.New("invalid name")

// Check reports whether s is a valid name; kind ("team", "agent", "type")
// only shapes the message.
func Check(kind, s string) error {
	if valid(s) {
		return nil
	}
	why := "must match " + Pattern
	switch {
	case s == "":
		why = "is empty"
	case len(s) > 64:
		why = fmt.Sprintf("is %d bytes long; at most 64 allowed", len(s))
	}
	return fmt.Errorf("%w: %s name %q %s", ErrInvalid, kind, s, why)
}
