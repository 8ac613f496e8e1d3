package runstream

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The ways the CLIs write a reset time in an error's text. Compiled on
// first use: every command that links this package (stale, spawn list:
// anything that records a spooled run) would otherwise compile them at
// start, the largest of their own initializers, for text only a supervisor
// reading a stream ever parses.
var (
	// codex: "… or try again at 3:11 AM." (the host's local time, today),
	// or, for a reset on another day, "… try again at Dec 5th, 2026 3:11
	// AM." (codex-rs/core/src/error.rs format_retry_timestamp).
	clockRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)try again at (?:([A-Z][a-z]{2}) (\d{1,2})(?:st|nd|rd|th)?,? (\d{4}) )?(\d{1,2}):(\d{2})\s*([AP]M)?`)
	})
	// "try again in 20s", "retry in 1m30s", "retryDelay":"20s", gemini's
	// "Suggested retry after 20s."
	inRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(?:again in|retry (?:in|after)|retryDelay\\?"\s*:\s*\\?")\s*((?:\d+(?:\.\d+)?(?:ms|h|m|s))+)`)
	})
)

// resetFromText finds a reset time in an error's text, nil when it has
// none. A clock time without a date is its next occurrence.
func (r *Reader) resetFromText(msg string) *time.Time {
	now := r.now()
	if m := inRe().FindStringSubmatch(msg); m != nil {
		if d, err := time.ParseDuration(strings.ToLower(m[1])); err == nil {
			t := now.Add(d)
			return &t
		}
	}
	if m := clockRe().FindStringSubmatch(msg); m != nil {
		h, _ := strconv.Atoi(m[4])
		min, _ := strconv.Atoi(m[5])
		switch strings.ToUpper(m[6]) {
		case "AM":
			if h == 12 {
				h = 0
			}
		case "PM":
			if h != 12 {
				h += 12
			}
		}
		local := now.Local()
		if m[1] != "" {
			// A date is said for a reset on another day: it is that day.
			if d, err := time.ParseInLocation("Jan 2 2006", strings.ToUpper(m[1][:1])+strings.ToLower(m[1][1:])+" "+m[2]+" "+m[3], local.Location()); err == nil {
				t := time.Date(d.Year(), d.Month(), d.Day(), h, min, 0, 0, local.Location())
				return &t
			}
		}
		t := time.Date(local.Year(), local.Month(), local.Day(), h, min, 0, 0, local.Location())
		// "3:11" said at 3:11:40 means the minute now, not tomorrow.
		if t.Before(local.Truncate(time.Minute)) {
			t = t.AddDate(0, 0, 1)
		}
		return &t
	}
	return nil
}

func unixTime(sec float64) *time.Time {
	if sec <= 0 {
		return nil
	}
	t := time.Unix(int64(sec), 0)
	return &t
}
