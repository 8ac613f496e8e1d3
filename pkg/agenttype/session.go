package agenttype

import (
	"strings"

	"github.com/teamkit/teamkit/pkg/runstream"
)

// A type whose CLI can continue a session declares how, with resume=: the
// whole command line of a run that continues session {session}, with the
// same placeholders as command and the same boot (the continued run's
// prompt travels as the briefing would). A re-spawn by resume (an answer,
// a park's end, a wake) then continues the session its agent's last run
// recorded instead of starting cold.

// checkResume reports what is wrong with c.Resume ("" when nothing): it
// must hold {session}, command must not, and it carries the prompt the
// way boot says, as command does.
func (c Conf) checkResume() (problem, expected string) {
	if c.uses("session") {
		return "command uses {session}", "{session} only in resume="
	}
	if len(c.Resume) == 0 {
		return "", ""
	}
	if c.Resume[0] == "" {
		return "resume is empty", "the command line of a run that continues session {session}"
	}
	r := Conf{Command: c.Resume}
	if !r.uses("session") {
		return "resume has no {session}", "{session} in the argument that names the session to continue"
	}
	for _, w := range c.Resume {
		if bad := unknownPlaceholder(w); bad != "" {
			return "resume uses unknown placeholder {" + bad + "}", "one of {" + strings.Join(placeholderNames, "}, {") + "}"
		}
	}
	if r.uses("prompt") != c.uses("prompt") || r.uses("prompt_file") != c.uses("prompt_file") {
		return "resume carries the prompt otherwise than command", "the same {prompt} or {prompt_file} as command (one boot for both)"
	}
	return "", ""
}

// ResumeArgv is the argv of a run that continues vars.Session: resume=
// with its placeholders filled in as Argv fills command's. A session that
// is not a session id (runstream.CheckSession: one starting with '-' the
// CLI would take for an option, say) is refused here, the last step
// before argv, whoever recorded it; spawn falls back to the full briefing
// before it gets this far.
func (c Conf) ResumeArgv(vars Vars) ([]string, error) {
	if err := runstream.CheckSession(vars.Session); err != nil {
		return nil, err
	}
	return Conf{Command: c.Resume}.Argv(vars)
}
