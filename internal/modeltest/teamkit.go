package modeltest

import (
	"regexp"
	"strconv"
	"strings"
)

// BriefingMarker starts every teamkit briefing (pkg/briefing's shared
// template); set it as Server.Marker.
const BriefingMarker = "# Your teamkit briefing"

// ContinueMarker starts the prompt of a run that continues its session
// (pkg/spawn's continued prompt): only what is new, the briefing before it
// in the session.
const ContinueMarker = "# teamkit: your session continues"

// Question is what Teamkit asks on an agent's first run.
const Question = `Blue or "green"?`

// answerBegin starts the fence around a human's answer in a re-spawn
// briefing (pkg/fence).
const answerBegin = "UNTRUSTED-HUMAN-TEXT BEGIN"

// The commands as a briefing spells them (a bare name or an absolute path).
var (
	readyRe = regexp.MustCompile("`([^`\n]*ready) mark`")
	inboxRe = regexp.MustCompile("`([^`\n]*inbox)`")
	askRe   = regexp.MustCompile("`([^`\n]*ask) \"your question\"`")
)

// Teamkit is a model that follows a teamkit briefing the way a good agent
// does, with the commands spelt exactly as the briefing spells them:
//
//  1. ready mark
//  2. inbox (drain)
//  3. inbox send lead -- 'got: <first line of the first message drained>'
//     (or, when re-spawned with an answer: 'answer: <the answer's first line>')
//  4. on a first run only: ask "Blue or "green"?" — then it stops, as the
//     briefing says.
//
// The step is the number of tool results in the conversation, so the
// server needs no state.
//
// In a continued session it follows the continuing prompt the same way,
// counting only the results since it.
func Teamkit(c Conversation) Turn {
	ask := find(askRe, c.Briefing, "ask")
	b, results := c.current()
	ready, inbox := find(readyRe, b, find(readyRe, c.Briefing, "ready")), find(inboxRe, b, find(inboxRe, c.Briefing, "inbox"))
	answer, answered := Answer(b)
	switch len(results) {
	case 0:
		return Turn{Command: ready + " mark"}
	case 1:
		return Turn{Command: inbox}
	case 2:
		reply := "got: " + firstMessageLine(results[1])
		if answered {
			reply = "answer: " + answer
		}
		return Turn{Command: inbox + " send lead -- " + quote(reply)}
	case 3:
		if !answered {
			return Turn{Command: ask + " " + quote(Question)}
		}
	}
	return Turn{Text: "Done; everything went out with inbox send."}
}

// Hold is a model whose agent marks ready and then stays busy: its second
// command runs until it is killed (a child of the CLI's shell tool), so a
// test can stop a real CLI in the middle of its work.
func Hold(c Conversation) Turn {
	switch len(c.Results) {
	case 0:
		return Turn{Command: find(readyRe, c.Briefing, "ready") + " mark"}
	case 1:
		return Turn{Command: "sleep 86399"}
	}
	return Turn{Text: "Done."}
}

// Answer is the first line of the fenced human answer in a briefing.
func Answer(briefing string) (string, bool) {
	_, rest, ok := strings.Cut(briefing, answerBegin)
	if !ok {
		return "", false
	}
	// The BEGIN marker's line, then a label line, then the text.
	lines := strings.SplitN(rest, "\n", 4)
	if len(lines) < 3 {
		return "", false
	}
	return lines[2], true
}

func find(re *regexp.Regexp, briefing, bare string) string {
	if m := re.FindStringSubmatch(briefing); m != nil {
		return m[1]
	}
	return bare
}

// firstMessageLine is the first body line of the first message in an
// `inbox` drain's output ("--- id=… from=…" headers).
func firstMessageLine(out string) string {
	_, rest, ok := strings.Cut(out, "--- id=")
	if !ok {
		return "(no message)"
	}
	lines := strings.SplitN(rest, "\n", 3)
	if len(lines) < 2 {
		return "(no message)"
	}
	return lines[1]
}

// quote is s as one POSIX shell word.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// hookReason is how a teamkit Stop hook's reason starts (inbox
// __stop-hook): the CLI sends it to the model when the hook blocks a stop.
const hookReason = "New teamkit mail"

// hookInbox is the command a hook's reason tells the model to run.
var hookInbox = regexp.MustCompile("Run `([^`\n]*inbox)`")

// nudged reports whether the model is being asked again by a Stop hook that
// blocked its stop, and the inbox command the hook's reason spells.
func nudged(c Conversation) (string, bool) {
	if !strings.Contains(c.Last, hookReason) {
		return "", false
	}
	m := hookInbox.FindStringSubmatch(c.Last)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// Mail is a model whose agent marks ready, then works until release is
// closed (its turn is held by the server), then ends its turn without
// draining, as an agent does that finished its task while mail came. Asked
// again by a Stop hook, it runs the inbox command the hook's reason spells,
// replies to lead with the first line of what it read ('got: …'), and ends
// its turn.
func Mail(release <-chan struct{}) Script {
	return func(c Conversation) Turn {
		if inbox, ok := nudged(c); ok {
			return Turn{Command: inbox}
		}
		last := lastResult(c)
		switch {
		case len(c.Results) == 0:
			return Turn{Command: find(readyRe, c.Briefing, "ready") + " mark"}
		case len(c.Results) == 1:
			<-release
			return Turn{Text: "First task done."}
		case strings.Contains(last, "--- id="):
			return Turn{Command: find(inboxRe, c.Briefing, "inbox") + " send lead -- " + quote("got: "+firstMessageLine(last))}
		}
		return Turn{Text: "Done; the mail is answered."}
	}
}

// Flood is a model whose agent marks ready and ends its turn without
// draining; each time a Stop hook asks it again it drains its inbox and
// sends itself one more message, so its mail keeps coming: only the hook's
// cap ends the run.
func Flood(c Conversation) Turn {
	if inbox, ok := nudged(c); ok {
		return Turn{Command: inbox}
	}
	last := lastResult(c)
	switch {
	case len(c.Results) == 0:
		return Turn{Command: find(readyRe, c.Briefing, "ready") + " mark"}
	case strings.Contains(last, "--- id="):
		return Turn{Command: find(inboxRe, c.Briefing, "inbox") + " send " + quote(nameOf(c.Briefing)) + " -- " + quote("more work")}
	}
	return Turn{Text: "Turn done."}
}

// BusyTurns is how many commands Busy's agent runs after it marked ready.
const BusyTurns = 12

// Busy is a model whose agent marks ready, then works for BusyTurns more
// model turns (a harmless command each), each reporting the server's usage,
// then ends: a run whose usage grows turn by turn, for budgets. A continued
// session does the same again from its continuing prompt.
func Busy(c Conversation) Turn {
	b, results := c.current()
	switch n := len(results); {
	case n == 0:
		return Turn{Command: find(readyRe, b, find(readyRe, c.Briefing, "ready")) + " mark"}
	case n <= BusyTurns:
		return Turn{Command: "echo turn " + strconv.Itoa(n)}
	}
	return Turn{Text: "Done; every turn is counted."}
}

// nameRe finds the agent's name in a teamkit briefing.
var nameRe = regexp.MustCompile(`You are the agent \*\*([^*\n]+)\*\*`)

func nameOf(briefing string) string {
	if m := nameRe.FindStringSubmatch(briefing); m != nil {
		return m[1]
	}
	return "self"
}

// lastResult is the output of the agent's latest command, "" before any.
func lastResult(c Conversation) string {
	if len(c.Results) == 0 {
		return ""
	}
	return c.Results[len(c.Results)-1]
}
