package escalate

import (
	"errors"
	"fmt"

	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/runstream"
)

// Sessions kept: every re-spawn of a pass (an answer, a park's end, a
// wake, a budget renewed) asks to continue the CLI session the agent's
// last run recorded, with a prompt holding only what is new; the kind of
// re-spawn supplies that news. Where there is no session to continue, the
// spawner falls back to the full briefing with the task, and the run's
// record says why (spawn.Continuation).

// Continuation is a re-spawn's request to continue a session: Session ""
// says why not in Why.
type Continuation struct {
	Session, Why, News string
}

// NewsLimitReset is the news of a park's re-spawn.
const NewsLimitReset = "The usage or rate limit that stopped your last run has reset: carry on with your task where you left off."

// continuation is the request to continue agent a's last session with
// news: none when the last run recorded no session, found its session
// gone, or ran on another host (its CLI keeps sessions on that host's disk).
func (p *pass) continuation(a mailbox.Agent, news string) (*Continuation, error) {
	c := &Continuation{News: news}
	if a.Host != p.r.Host {
		c.Why = fmt.Sprintf("the last run %s was on host %s", a.Run, a.Host)
		return c, nil
	}
	rec, err := p.r.DB.Run(p.ctx, a.Team, a.Run)
	switch {
	case errors.Is(err, mailbox.ErrNotFound) || err == nil && rec.Session == "":
		c.Why = fmt.Sprintf("the last run %s recorded no session", a.Run)
	case err != nil:
		return nil, err
	case runstream.CheckSession(rec.Session) != nil:
		// Not one the reader of this version records (a record of an
		// older one, or another host's): never handed to resume=.
		c.Why = fmt.Sprintf("the last run %s recorded no usable session: %v", a.Run, runstream.CheckSession(rec.Session))
	case rec.End == runstream.EndSessionGone:
		// A spawn that did not fall back at once (queued, foreground).
		c.Why = fmt.Sprintf("the last run %s found its session gone", a.Run)
	default:
		c.Session = rec.Session
	}
	return c, nil
}
