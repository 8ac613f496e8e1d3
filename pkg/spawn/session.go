package spawn

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/teamkit/teamkit/pkg/agenttype"
	"github.com/teamkit/teamkit/pkg/briefing"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/runstream"
)

// Continuation asks a re-spawn (an answer, a park's end, a wake, a budget
// renewed) to continue the CLI session of the agent's last run, with a
// prompt holding only what is new, instead of the full briefing.
type Continuation struct {
	// Session is the session the last run recorded; "" when there is none
	// to continue, and Why says why.
	Session, Why string
	// News is what is new since the session stopped, teamkit's words
	// (any human text in it already fenced).
	News string
}

// brief decides how run is briefed: the continued prompt and the resume=
// argv when the request continues a session its type can resume, else the
// full briefing and command. note is the run record's Briefing.
func (j *job) brief(full string, cmds briefing.Commands, vars agenttype.Vars) (text string, argv []string, note string, err error) {
	c := j.req.Continue
	switch {
	case c == nil:
	case c.Session == "":
		note = "full: " + c.Why
	case len(j.t.Conf.Resume) == 0:
		note = fmt.Sprintf("full: type %s declares no resume=", j.t.Name)
	default:
		text = continued(j.req.Team, j.req.Name, j.run, cmds, c.News)
		vars.Session = c.Session
		if j.t.Conf.Boot == agenttype.BootArgv {
			vars.Prompt = text
		}
		argv, err = j.t.Conf.ResumeArgv(vars)
		return text, argv, "continued", err
	}
	if j.t.Conf.Boot == agenttype.BootArgv {
		vars.Prompt = full
	}
	argv, err = j.t.Conf.Argv(vars)
	return full, argv, note, err
}

// fallBack launches the agent again with the full briefing when the run
// that was to continue a session ended because its CLI no longer has that
// session (runstream.EndSessionGone): the CLI ended before it asked its
// model anything. The new run's record says "full: session S is gone". An
// answer the gone run carried goes to the new run: the gone run gives it
// back (launching R again) and the new one replaces it as the launch, so
// the answer is delivered once, by the run that showed it to the agent.
func (j *job) fallBack(ctx context.Context, db *mailbox.DB, res Result) (Result, error) {
	c := j.req.Continue
	if c == nil || c.Session == "" || res.Status != StatusExited || res.Record == nil || res.Record.End != runstream.EndSessionGone {
		return res, nil
	}
	gone := j.run
	// The new launch replaces the gone one's record, and no other.
	prev := j.agent()
	j.prev = &prev
	j.req.Run = NewRun(time.Now())
	if j.req.Ask > 0 {
		if err := db.UnstartRun(ctx, j.req.Ask, gone); err != nil {
			return res, err
		}
		if ok, err := db.LaunchAnswer(ctx, j.req.Ask, j.req.Run); err != nil || !ok {
			// Delivered by another launch: nothing more to carry.
			return res, err
		}
	}
	j.req.Continue = &Continuation{Why: fmt.Sprintf("session %s is gone", c.Session)}
	if err := j.writeRun(); err != nil {
		return Result{}, err
	}
	if j.req.MaxRunning > 0 {
		// Under a cap the full run waits its turn like the gone one did.
		return j.queued(ctx, db)
	}
	if err := j.record(ctx, db); err != nil {
		return Result{}, err
	}
	return j.start(ctx, db)
}

// continued is the prompt of a run that continues its session: the
// briefing the session began with still holds, except the run (and so
// TEAMKIT_RUN, which its environment carries), the handshake it owes and
// what is new.
func continued(team, name, run string, cmds briefing.Commands, news string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# teamkit: your session continues\n\nYou are still the agent **%s** in the team **%s**, now as run %s "+
		"(your environment's TEAMKIT_RUN says so). Your briefing from the start of this session still holds.\n\n", name, team, run)
	fmt.Fprintf(&b, "1. Run `%s mark` now: whoever started this run is waiting for it.\n", cmds.Ready)
	fmt.Fprintf(&b, "2. Drain your inbox: run `%s`.\n3. Carry on with your task, with what is new below.\n\n", cmds.Inbox)
	b.WriteString("## What is new\n\n")
	b.WriteString(strings.TrimRight(news, "\n"))
	b.WriteString("\n")
	return b.String()
}
