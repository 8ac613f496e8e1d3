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
	"strings"
)

// Pattern is the grammar of a name, as the README documents it: no
// trailing dot, which Windows drops from a file name (so "w1." and "w1"
// would share their files). Check also refuses Windows' device names.
const Pattern = `[A-Za-z0-9]([A-Za-z0-9._-]{0,62}[A-Za-z0-9_-])?`

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
	return s[len(s)-1] != '.'
}

// device reports whether s names a Windows device (CON, PRN, AUX, NUL,
// COM0-9, LPT0-9, in any case, alone or before an extension): no file or
// directory can have such a name there, and a team's agents may run on
// Windows hosts.
func device(s string) bool {
	base, _, _ := strings.Cut(s, ".")
	switch strings.ToUpper(base) {
	case "CON", "PRN", "AUX", "NUL":
		return true
	}
	if len(base) == 4 && base[3] >= '0' && base[3] <= '9' {
		switch strings.ToUpper(base[:3]) {
		case "COM", "LPT":
			return true
		}
	}
	return false
}

// ErrInvalid is wrapped by every error Check returns.
var ErrInvalid = errors.New("invalid name")

// Check reports whether s is a valid name; kind ("team", "agent", "type")
// only shapes the message.
func Check(kind, s string) error {
	if valid(s) {
		if device(s) {
			return fmt.Errorf("%w: %s name %q is a device name on Windows (CON, PRN, AUX, NUL, COM0-9, LPT0-9), which no file there can have", ErrInvalid, kind, s)
		}
		return nil
	}
	why := "must match " + Pattern
	switch {
	case s == "":
		why = "is empty"
	case len(s) > 64:
		why = fmt.Sprintf("is %d bytes long; at most 64 allowed", len(s))
	case s[len(s)-1] == '.':
		why = "ends in a dot, which Windows drops from a file name"
	}
	return fmt.Errorf("%w: %s name %q %s", ErrInvalid, kind, s, why)
}
