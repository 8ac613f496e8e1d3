package escalate

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/teamkit/teamkit/pkg/mailbox"
)

// MarkerPrefix starts every hidden marker teamkit writes into a GitHub
// comment. A comment containing it is never taken as an answer.
const MarkerPrefix = "<!-- teamkit:"

// Marker identifies the ask a question comment carries. It is written on the
// comment's last line as an HTML comment, which GitHub does not render.
type Marker struct {
	ID    int64
	Team  string
	Agent string
	Run   string // "" when the ask was not made by a spawned run
	Kind  string
}

// String is the marker line, e.g.
// "<!-- teamkit:ask id=42 team=t agent=w1 run=20250101T000000Z-ab12cd34 kind=question -->".
func (m Marker) String() string {
	run := m.Run
	if run == "" {
		run = "-"
	}
	return fmt.Sprintf("%sask id=%d team=%s agent=%s run=%s kind=%s -->", MarkerPrefix, m.ID, m.Team, m.Agent, run, m.Kind)
}

// MarkerOf is the marker of ask a.
func MarkerOf(a mailbox.Ask) Marker {
	return Marker{ID: a.ID, Team: a.Team, Agent: a.Agent, Run: a.Run, Kind: a.Kind}
}

var markerLine = regexp.MustCompile(`^<!-- teamkit:ask id=([0-9]+) team=(\S+) agent=(\S+) run=(\S+) kind=(question|approval) -->$`)

// ParseMarker reads the marker from the last non-empty line of a comment
// body. Only that line counts, so a marker quoted inside the question text
// (which is neutralized anyway) can never be mistaken for the real one.
func ParseMarker(body string) (Marker, bool) {
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(body, "\r\n", "\n"), "\n \t"), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	m := markerLine.FindStringSubmatch(last)
	if m == nil {
		return Marker{}, false
	}
	id, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return Marker{}, false
	}
	run := m[4]
	if run == "-" {
		run = ""
	}
	return Marker{ID: id, Team: m[2], Agent: m[3], Run: run, Kind: m[5]}, true
}

// HasMarker reports whether body carries any teamkit marker, anywhere.
func HasMarker(body string) bool { return strings.Contains(body, MarkerPrefix) }

// QuestionComment is the GitHub comment that carries ask a: a heading naming
// the agent and team, the question quoted, how to answer, and the hidden
// marker on the last line.
//
// The question is the agent's text, shown as a Markdown quote. Any "<!--" in
// it is escaped, so it can neither hide text from the reader nor plant a
// marker of its own.
func QuestionComment(a mailbox.Ask) string {
	var b strings.Builder
	if a.Kind == mailbox.KindApproval {
		fmt.Fprintf(&b, "### Approval requested by agent `%s` of team `%s`\n\n", a.Agent, a.Team)
	} else {
		fmt.Fprintf(&b, "### Question from agent `%s` of team `%s`\n\n", a.Agent, a.Team)
	}
	for _, line := range strings.Split(strings.TrimRight(quoteSafe(a.Question), "\n"), "\n") {
		if line == "" {
			b.WriteString(">\n")
			continue
		}
		b.WriteString("> ")
		b.WriteString(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	if a.Kind == mailbox.KindApproval {
		b.WriteString("**How to decide:** only a listed decider can decide this. Reply with a comment holding a line " +
			"`/approve` or `/reject`, optionally followed by a reason (`/approve looks safe`), or react to this comment " +
			"with 👍 (approve) or 👎 (reject). Other replies, and replies from anyone not on the deciders list, " +
			"are not taken as a decision. The first decision counts.\n\n")
	} else {
		b.WriteString("**How to answer:** reply to this issue with a comment. The first reply from the issue's author, " +
			"a repository owner, member or collaborator, or a listed decider is carried back to the agent, which is " +
			"started again with your answer. Other replies are ignored.\n\n")
	}
	fmt.Fprintf(&b, "<sub>teamkit ask %d · the agent has stopped and waits for the answer.</sub>\n", a.ID)
	b.WriteString(MarkerOf(a).String())
	b.WriteByte('\n')
	return b.String()
}

// quoteSafe normalizes line ends and escapes HTML comment openers, so the
// quoted question renders as written and hides nothing.
func quoteSafe(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return strings.ReplaceAll(s, "<!--", `<\!--`)
}
