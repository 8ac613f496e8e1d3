package spawn

import (
	"fmt"
	"strings"

	"github.com/teamkit/teamkit/pkg/agenttype"
	"github.com/teamkit/teamkit/pkg/briefing"
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
