package runstream

import (
	"fmt"
	"strconv"
)

// MaxSession is the longest session id taken from a stream, in bytes. The
// ids the pinned CLIs report are far shorter (a UUID is 36; opencode's
// ses_… about 30).
const MaxSession = 128

// CheckSession reports why id cannot be a CLI's session id, nil when it
// can. A session id ends up as an argument of the command that continues
// the session (type.conf resume=, {session}), so it is held to what the
// CLIs report — letters, digits and - _ . : — and must not start with '-',
// which the CLI would read as an option. Nothing goes through a shell:
// this keeps an id from being anything but the one argument it names.
func CheckSession(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("session id is empty")
	case len(id) > MaxSession:
		return fmt.Errorf("session id %s… is %d bytes, more than %d", strconv.Quote(id[:32]), len(id), MaxSession)
	case id[0] == '-':
		return fmt.Errorf("session id %s starts with '-'", strconv.Quote(id))
	}
	for _, c := range id {
		if !sessionRune(c) {
			return fmt.Errorf("session id %s holds %s (letters, digits, '-', '_', '.' and ':' only)",
				strconv.Quote(id), strconv.QuoteRune(c))
		}
	}
	return nil
}

func sessionRune(c rune) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':'
}

// session takes id, read from the stream, as the run's session when it is
// one (CheckSession), and returns the log's line for it. One that is not
// is logged (escaped) and not recorded: the agent's next re-spawn then
// finds no session and gets the full briefing.
func (r *Reader) session(id string) string {
	if err := CheckSession(id); err != nil {
		return "[session not recorded: " + err.Error() + "]"
	}
	r.Session = id
	return "[session " + id + "]"
}
