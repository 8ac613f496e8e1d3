package command

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/teamkit/teamkit/pkg/roster"
)

// durationValue is a flag value that reads a duration the way a user of
// the toolkit writes one: a plain number is seconds ("--timeout 60", like
// type.conf's ready_timeout), a number with a "d" suffix is days
// ("--older 30d"), anything else is a Go duration ("90s", "10m", "1h30m").
type durationValue struct{ d time.Duration }

func (v *durationValue) Set(s string) error {
	d, err := ParseDuration(s)
	if err != nil {
		return err
	}
	v.d = d
	return nil
}

func (v *durationValue) String() string {
	if v == nil || v.d == 0 {
		return ""
	}
	return v.d.String()
}

// ParseDuration reads s as DurationFlag does: seconds when a plain number,
// days with a "d" suffix, else a Go duration.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return secondsOf(f, s, time.Second)
	}
	if n, ok := strings.CutSuffix(s, "d"); ok {
		if f, err := strconv.ParseFloat(n, 64); err == nil {
			return secondsOf(f, s, 24*time.Hour)
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		if tooLong(s) {
			return 0, fmt.Errorf("%q is out of range (at most 2562047h, about 292 years)", s)
		}
		return 0, fmt.Errorf("%q is not a duration (want seconds such as 60, or 90s, 10m, 1h, 30d)", s)
	}
	return d, nil
}

// unitSeconds is one of time.ParseDuration's units in seconds (a switch,
// not a map: every command would build the map as it starts).
func unitSeconds(u string) (float64, bool) {
	switch u {
	case "ns":
		return 1e-9, true
	case "us", "µs", "μs":
		return 1e-6, true
	case "ms":
		return 1e-3, true
	case "s":
		return 1, true
	case "m":
		return 60, true
	case "h":
		return 3600, true
	}
	return 0, false
}

// tooLong reports whether s is written as time.ParseDuration reads a
// duration but is longer than a time.Duration holds, which ParseDuration
// refuses in the same words as a typo.
func tooLong(s string) bool {
	s = strings.TrimLeft(s, "+-")
	var secs float64
	for s != "" {
		n := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
		if n <= 0 {
			return false
		}
		f, err := strconv.ParseFloat(s[:n], 64)
		if err != nil {
			return false
		}
		s = s[n:]
		u := strings.IndexFunc(s, func(r rune) bool { return r >= '0' && r <= '9' || r == '.' })
		if u < 0 {
			u = len(s)
		}
		unit, ok := unitSeconds(s[:u])
		if !ok {
			return false
		}
		secs += f * unit
		s = s[u:]
	}
	return secs*1e9 >= 1<<63
}

func secondsOf(f float64, s string, unit time.Duration) (time.Duration, error) {
	if f != f || f > float64(1<<62)/float64(unit) || f < -float64(1<<62)/float64(unit) {
		return 0, fmt.Errorf("%q is out of range (at most 2562047h, about 292 years)", s)
	}
	return time.Duration(f * float64(unit)), nil
}

// DurationFlag is a --NAME flag taking a duration as ParseDuration reads it;
// read it back with Duration.
func DurationFlag(name, usage string) *cli.GenericFlag {
	return &cli.GenericFlag{Name: name, Usage: usage, Value: &durationValue{}}
}

// DurationFlagDefault is DurationFlag with a default value, shown in help.
func DurationFlagDefault(name, usage string, def time.Duration) *cli.GenericFlag {
	return &cli.GenericFlag{Name: name, Usage: usage, Value: &durationValue{d: def}}
}

// Duration is the value of a DurationFlag (0 when not given).
func Duration(c *cli.Context, name string) time.Duration {
	if v, ok := c.Generic(name).(*durationValue); ok && v != nil {
		return v.d
	}
	return 0
}

// Heartbeat is TEAMKIT_HEARTBEAT: how often the supervisors of the runs this
// command launches renew their heartbeat (another host calls a run lost
// after three missed beats).
func Heartbeat(env *Env) (time.Duration, error) {
	s := env.Getenv("TEAMKIT_HEARTBEAT")
	if s == "" {
		return roster.DefaultHeartbeat, nil
	}
	d, err := ParseDuration(s)
	if err != nil || d < 10*time.Millisecond {
		return 0, Usagef("TEAMKIT_HEARTBEAT=%q: want a duration of at least 10ms, such as 15s", s)
	}
	return d, nil
}
