package escalate

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/teamkit/teamkit/pkg/mailbox"
)

// Channel is one way an ask reaches a person and their answer comes back:
// a GitHub issue (github.go), a Slack thread (slack.go), or the mailbox
// itself, answered with `ask answer` (local.go). ask posts through it and
// every resume pass reads through it; neither names a channel. A channel
// keeps what it learns during a pass (caches, a rate limit seen) until its
// next Ready.
//
// Adding a channel is one file implementing Channel, one entry in
// Config.Channels and one harness in channeltest_test.go, whose suite every
// channel must pass.
type Channel interface {
	// Name names the channel in every line about it ("github").
	Name() string
	// Holds reports whether ask a is on this channel: posted there, or
	// meant to be and the post failed (a pass posts it then). This is the
	// only place that tells which channels an ask belongs to.
	Holds(a mailbox.Ask) bool
	// Describe is the channel's record of ask a, for ask's output (the
	// zero Description when it has none).
	Describe(a mailbox.Ask) Description
	// Post puts the question of new (fresh) or re-tried ask a on the
	// channel, exactly once, if the ask goes there (else it returns a
	// unchanged), and returns the ask as recorded after. Where it went, or
	// why it did not, is recorded on the ask. An *OptionalError is a
	// channel the ask does not depend on (a mirror) failing.
	Post(ctx context.Context, db *mailbox.DB, a mailbox.Ask, fresh bool) (mailbox.Ask, error)
	// Ready is the channel's health at the start of a pass that has asks
	// on it: it makes its client on first need and re-reads who may
	// answer. An error means nothing on the channel is read this pass; a
	// *ConfigError says the configuration cannot work, so retrying soon
	// is pointless.
	Ready(ctx context.Context, rd Round) error
	// Find reads held ask a on the channel as it stands and returns the
	// answer or decision it holds, if any, judged by who may answer there.
	// A question that never reached the channel is posted instead. An
	// error from the mailbox (*mailbox.Error) ends the pass; any other
	// fails this ask's read (a rate limit is no failure: the channel says
	// so through rd.Note and returns nothing).
	Find(ctx context.Context, rd Round, a mailbox.Ask) (mailbox.Decision, bool, error)
}

// A PeopleReader is a channel with its own list of who may answer (GitHub's
// deciders, Slack's people). The pass re-reads it first thing, asks or not:
// a list that cannot be read is said at once, not when the first ask comes,
// and the channel's approvals fail closed until it is fixed.
type PeopleReader interface {
	ReadPeople() error
}

// Description is a channel's record of an ask.
type Description struct {
	// KV are key, value pairs for ask's one-line result ("channel", "github", "issue", …).
	KV []string
	// Column is the ask's place in the CHANNEL column of ask list; Note is
	// said after the places ("(slack post failed: …)").
	Column, Note string
	// Fallback: Column is shown only when no other channel has a place.
	Fallback bool
	// Where names where the question was posted, for the asking agent
	// ("" when nothing was).
	Where string
}

// Describe is ask a as the channels chs record it, in their order.
func Describe(chs []Channel, a mailbox.Ask) (kv []string, column string, where []string) {
	var places, fallback, notes []string
	for _, ch := range chs {
		d := ch.Describe(a)
		kv = append(kv, d.KV...)
		switch {
		case d.Column == "":
		case d.Fallback:
			fallback = append(fallback, d.Column)
		default:
			places = append(places, d.Column)
		}
		if d.Note != "" {
			notes = append(notes, d.Note)
		}
		if d.Where != "" {
			where = append(where, d.Where)
		}
	}
	if len(places) == 0 {
		places = fallback
	}
	return kv, strings.Join(append([]string{strings.Join(places, " + ")}, notes...), " "), where
}

// Round is what a pass lends a channel.
type Round struct {
	DB *mailbox.DB
	// Note writes a line (a warning, what was posted) on the pass's stderr.
	Note func(format string, args ...any)
	// Fail writes an error line and counts it as a failure of the channel
	// in this pass.
	Fail func(format string, args ...any)
}

// ConfigError is a channel configured so that it cannot work: no token for
// an ask that needs one, a token of the wrong kind or without a scope. It
// is reported once, with Hint, and not retried as if it were an outage.
type ConfigError struct {
	Err  error
	Hint string
}

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// OptionalError is the failure of a channel the ask does not depend on (a
// Slack mirror of a question): a warning, never a failed ask.
type OptionalError struct{ Err error }

func (e *OptionalError) Error() string { return e.Err.Error() }
func (e *OptionalError) Unwrap() error { return e.Err }

// named prefixes err with the channel's name, unless it already says it
// ("github: 502 …", "slack chat.postMessage: …").
func named(name string, err error) string {
	s := err.Error()
	if strings.HasPrefix(s, name+":") || strings.HasPrefix(s, name+" ") {
		return s
	}
	return name + ": " + s
}

// isDB tells a mailbox error, which ends a pass, from a channel's.
func isDB(err error) bool {
	var dbErr *mailbox.Error
	return errors.As(err, &dbErr)
}

// PostGrace is how long a pass leaves an unposted ask that recorded no
// failure to the ask command still posting it: longer than ask's post can
// take with its retries (on GitHub 4 attempts of 30 s, 3 waits of up to
// 60 s).
const PostGrace = 10 * time.Minute
