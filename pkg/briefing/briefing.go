// Package briefing renders the briefing an agent is started with: the text
// that tells it who it is, to run `ready mark`, to drain its inbox at once
// (work may be waiting from before it attached), what its task is, to keep
// checking the inbox, and to `ask` and exit when it is blocked.
//
// Each agent type has its own template.md, but the instructions every agent
// needs live here once, as the named template "teamkit"; a type's template
// includes them with {{template "teamkit" .}} and adds only what is particular
// to its CLI.
//
// Public: a Go program embedding teamkit may import this package.
package briefing

import (
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"sync"
	"text/template"

	"github.com/teamkit/teamkit/pkg/readlimit"
)

// MaxSize bounds a rendered briefing as the task is bounded (16 MiB, the
// mailbox's largest body): twice that leaves room for the task and the
// template's own text around it, while a loop in a template ({{range
// 100000000}}) stops at the limit instead of growing spawn until it dies.
const MaxSize = 32 << 20

// CoreTemplate is the name of the shared instructions every type template can
// include.
const CoreTemplate = "teamkit"

//go:embed teamkit.tmpl
var coreText string

// core is parsed once, on first use (not at every command's start: most
// never render a briefing); Render clones it so type templates never see
// each other's definitions.
var core = sync.OnceValue(func() *template.Template {
	return template.Must(template.New(CoreTemplate).Option("missingkey=error").Parse(coreText))
})

// Data is what a briefing template can refer to. It has no mailbox: a
// postgres:// URL can carry a password, and a briefing may travel in argv
// or sit in a log; the agent finds its mailbox through TEAMKIT_DB, which
// spawn exports, and every teamkit command it runs reads it from there.
type Data struct {
	Team string
	Name string
	Type string
	Run  string
	// Issue is the GitHub issue the agent works on (owner/repo#N), or "".
	Issue string
	// Task is placed in the briefing byte for byte (text/template escapes
	// nothing); when empty, the briefing has no task section.
	Task string
	// Monitor is true when a push monitor watches the agent's inbox; when
	// false the briefing says plainly that the agent must poll.
	Monitor bool
	// Commands spell the teamkit commands the briefing tells the agent to
	// run; Render fills in the bare name for any left empty.
	Commands Commands
}

// Commands are the teamkit commands as an agent must type them into its
// shell tool: spawn resolves them to absolute paths, because the agent's
// shell may not have them on its PATH (codex runs every command in a login
// shell, whose /etc/profile resets PATH; a ~/.bashrc may do the same).
// Each is one plain shell word (no quoting needed).
type Commands struct {
	Ready, Inbox, Ask string
}

// WithDefaults fills in the bare names for c's empty fields.
func WithDefaults(c Commands) Commands { return c.withDefaults() }

// withDefaults fills in the bare names for empty fields.
func (c Commands) withDefaults() Commands {
	for _, f := range []struct {
		p    *string
		name string
	}{{&c.Ready, "ready"}, {&c.Inbox, "inbox"}, {&c.Ask, "ask"}} {
		if *f.p == "" {
			*f.p = f.name
		}
	}
	return c
}

// Render executes the template tmpl, called name in errors (say, the path of
// the type's template.md), with the shared "teamkit" template available to
// it, and returns the briefing. A briefing that comes out blank is an error.
func Render(name, tmpl string, d Data) (string, error) {
	set, err := core().Clone()
	if err != nil {
		return "", fmt.Errorf("briefing template %s: %w", name, err)
	}
	// A byte-order mark an editor wrote is not part of the briefing (nor of
	// a type.conf): it would reach the agent, and make a blank template
	// look written.
	t, err := set.New(name).Parse(strings.TrimPrefix(tmpl, "\ufeff"))
	if err != nil {
		return "", fmt.Errorf("briefing template %s: %w", name, err)
	}
	d.Commands = d.Commands.withDefaults()
	var b strings.Builder
	if err := t.Execute(&limitWriter{w: &b, left: MaxSize}, d); err != nil {
		var big *readlimit.TooLargeError
		if errors.As(err, &big) {
			return "", fmt.Errorf("briefing template %s: its output is %w; a briefing holds the task and instructions, not bulk data", name, big)
		}
		return "", fmt.Errorf("briefing template %s: %w", name, err)
	}
	// An agent started with a blank briefing would sit idle with no idea who
	// it is: the very failure teamkit exists to remove.
	if strings.TrimSpace(b.String()) == "" {
		return "", fmt.Errorf("briefing template %s: rendered an empty briefing; expected at least {{template %q .}}", name, CoreTemplate)
	}
	return b.String(), nil
}

// limitWriter fails the write that would take the output past left bytes;
// text/template stops executing at a failed write.
type limitWriter struct {
	w    *strings.Builder
	left int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > l.left {
		return 0, &readlimit.TooLargeError{Max: MaxSize}
	}
	l.left -= int64(len(p))
	return l.w.Write(p)
}
