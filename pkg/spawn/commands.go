package spawn

import (
	"path/filepath"
	"strings"

	"github.com/teamkit/teamkit/pkg/briefing"
	"github.com/teamkit/teamkit/pkg/launch"
)

// Commands resolves the teamkit commands an agent is told to run (ready,
// inbox, ask) to absolute paths, so the agent finds them whatever its shell
// does to PATH: codex runs every command in a login shell, whose /etc/profile
// resets PATH; a ~/.bashrc or ~/.profile may do the same; and the spawner's
// PATH may not hold the Go bin directory at all (spawn started by its full
// path, from cron). Each is looked up first on the spawner's PATH (the one
// the user would run), else beside self, the spawn executable (installed
// together, the same version). One found nowhere, or at a path a shell would
// need quotes for (a space, say), stays its bare name, which still works for
// an agent whose shell keeps PATH: the spelling must be one plain shell word,
// since it is typed into a shell and passed as an argument alike.
func Commands(environ []string, self string) briefing.Commands {
	find := func(name string) string {
		p, err := launch.LookPath(name, environ)
		if err != nil && self != "" {
			p, err = launch.LookPath(filepath.Join(filepath.Dir(self), name), nil)
		}
		if err != nil {
			return name
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if !plainWord(p) {
			return name
		}
		return p
	}
	return briefing.Commands{Ready: find("ready"), Inbox: find("inbox"), Ask: find("ask")}
}

// plainWord holds only characters that mean nothing to a shell.
func plainWord(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:,@%", r)) {
			return false
		}
	}
	return s != ""
}
