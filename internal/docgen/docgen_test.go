package docgen_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/teamkit/teamkit/internal/cmd/ask"
	"github.com/teamkit/teamkit/internal/cmd/inbox"
	"github.com/teamkit/teamkit/internal/cmd/ready"
	"github.com/teamkit/teamkit/internal/cmd/resume"
	"github.com/teamkit/teamkit/internal/cmd/spawn"
	"github.com/teamkit/teamkit/internal/cmd/stale"
	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/internal/docgen"
)

// emptySlot is what a "<name>" the markdown step swallowed leaves behind:
// "messages for , oldest first".
var emptySlot = regexp.MustCompile(`\w (,|\.|\)) |\w  \w|\(\)|\[\]`)

// Each man page's SYNOPSIS gives the command's forms with their arguments,
// and no placeholder of the help text vanishes on the way to roff.
func TestManPages(t *testing.T) {
	apps := map[string]command.App{"inbox": inbox.App, "stale": stale.App, "ready": ready.App,
		"spawn": spawn.App, "ask": ask.App, "resume": resume.App}
	for name, app := range apps {
		docs, err := docgen.Docs(name, app)
		if err != nil {
			t.Fatal(err)
		}
		man := docs["docs/man/"+name+".1"]
		_, after, _ := strings.Cut(man, ".SH SYNOPSIS\n")
		synopsis, _, _ := strings.Cut(after, ".SH ")
		if !strings.Contains(synopsis, `\&`+name+" ") || !strings.Contains(synopsis, "<") {
			t.Errorf("%s.1: SYNOPSIS without the command's forms:\n%s", name, synopsis)
		}
		for _, line := range strings.Split(man, "\n") {
			if emptySlot.MatchString(line) {
				t.Errorf("%s.1: an empty placeholder in %q", name, line)
			}
		}
	}
}
