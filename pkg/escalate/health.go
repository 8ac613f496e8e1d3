package escalate

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/text"
)

// Channels fail alone. A pass reads each channel through find, which
// counts how the channel fared (round); at the end of the pass
// settleHealth turns that into the channel's health, kept across the
// passes of a watch: ok; down (it failed every read: an outage), retried
// after its own backoff, from the interval doubling up to MaxBackoff; or
// misconfigured (a *ConfigError: no token, a token of the wrong kind),
// said once with a hint and retried only every MaxBackoff, in case someone
// fixed it meanwhile. A channel that is down or backing off is skipped; the
// others, and the answers already given (ask answer), carry on at the
// interval. A watch says each change of a channel's health on one line.

// The states of a channel's health.
const (
	healthOK            = "ok"
	healthDown          = "down"
	healthMisconfigured = "misconfigured"
)

// health is a channel's standing across the passes of one Resumer.
type health struct {
	state string
	said  string        // the error last said about it
	wait  time.Duration // its current backoff
	next  time.Time     // passes skip it until then
}

// round is how a channel fared in one pass.
type round struct {
	used     bool
	skip     bool  // not read this pass: backing off, or Ready failed
	backing  bool  // skipped for its backoff: no news of its health
	readyErr error // why Ready failed
	config   error // a *ConfigError met this pass
	ok       int   // reads that worked
	failed   int   // failures of the channel this pass
	last     error // the last failure
}

func (r *Resumer) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Resumer) healthOf(name string) *health {
	if r.health == nil {
		r.health = map[string]*health{}
	}
	h := r.health[name]
	if h == nil {
		h = &health{state: healthOK}
		r.health[name] = h
	}
	return h
}

// find reads ask a on channel ch (see Channel.Find), unless ch cannot be
// used this pass. Only mailbox errors are returned.
func (p *pass) find(ch Channel, a mailbox.Ask) (mailbox.Decision, bool, error) {
	name := ch.Name()
	p.mu.Lock()
	rd := p.chans[name]
	if rd == nil {
		rd = &round{}
		p.chans[name] = rd
	}
	p.mu.Unlock()
	sink := p.sink(rd)
	if !rd.used {
		rd.used = true
		p.mu.Lock()
		next := p.r.healthOf(name).next
		p.mu.Unlock()
		if p.r.watching && p.r.now().Before(next) {
			rd.skip, rd.backing = true, true
		} else if err := ch.Ready(p.ctx, sink); err != nil {
			if isDB(err) {
				return mailbox.Decision{}, false, err
			}
			rd.skip, rd.readyErr = true, err
			p.channelFailed(rd, err)
			p.count() // no ask to count it by
			if !p.r.watching {
				// A watch says it once, as the channel's health.
				p.r.note("error: %s; the asks on %s stay awaiting", named(name, err), name)
				p.hint(err)
			}
		}
	}
	if rd.skip {
		return mailbox.Decision{}, false, nil
	}
	dec, found, err := ch.Find(p.ctx, sink, a)
	switch {
	case err == nil:
		p.mu.Lock()
		rd.ok++
		p.mu.Unlock()
	case isDB(err):
		return mailbox.Decision{}, false, err
	default:
		p.channelFailed(rd, err)
		p.fail(a, err)
	}
	return dec, found, nil
}

// sink is the Round lent to a channel in this pass.
func (p *pass) sink(rd *round) Round {
	return Round{
		DB:   p.r.DB,
		Note: p.r.note,
		Fail: func(format string, args ...any) {
			p.channelFailed(rd, fmt.Errorf(format, args...))
			p.count()
			p.r.note(format, args...)
		},
	}
}

func (p *pass) channelFailed(rd *round, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	rd.failed++
	rd.last = err
	var ce *ConfigError
	if errors.As(err, &ce) {
		rd.config = err
	}
}

// hint writes err's hint, if it is a *ConfigError with one.
func (p *pass) hint(err error) {
	var ce *ConfigError
	if errors.As(err, &ce) && ce.Hint != "" {
		p.r.note("hint: %s", ce.Hint)
	}
}

// settleHealth turns how each channel fared this pass into its health,
// says the changes (in a watch), and returns the failures that were the
// channels'.
func (p *pass) settleHealth() int {
	total := 0
	now := p.r.now()
	ceiling := max(MaxBackoff, p.r.interval)
	for name, rd := range p.chans {
		total += rd.failed
		if rd.backing {
			continue
		}
		h := p.r.healthOf(name)
		was := h.state
		switch {
		case rd.config != nil:
			h.state, h.wait = healthMisconfigured, ceiling
			h.next = now.Add(h.wait)
			switch {
			case p.r.watching && (was != h.state || h.said != rd.config.Error()):
				p.r.note("%s: %s: %s; the next try in %s", name, h.state, unnamed(name, rd.config), h.wait)
				p.hint(rd.config)
			case !p.r.watching && rd.readyErr == nil:
				p.hint(rd.config) // after the ask's own error line
			}
			h.said = rd.config.Error()
		case rd.failed > 0 && rd.ok == 0:
			h.state = healthDown
			h.wait = min(max(h.wait*2, p.r.interval), ceiling)
			h.next = now.Add(h.wait)
			if p.r.watching && was != h.state {
				p.r.note("%s: %s: %s; the other channels carry on, and %s is tried again in %s, then less and less often",
					name, h.state, unnamed(name, rd.last), name, h.wait)
			}
			h.said = rd.last.Error()
		default:
			h.state, h.wait, h.next, h.said = healthOK, 0, time.Time{}, ""
			if p.r.watching && was != h.state {
				p.r.note("%s: %s again", name, h.state)
			}
		}
	}
	return total
}

// unnamed is err's text without the channel's name in front.
func unnamed(name string, err error) string {
	s := strings.TrimPrefix(text.OneLine(err.Error()), "error: ")
	return strings.TrimPrefix(s, name+": ")
}
