//go:build linux

package teamkit_test

import (
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/teamkit/teamkit/internal/command"
)

// TestREADMESynopsis compares each command's verbs and flags with the
// synopsis at the top of its README section: every visible verb has a
// line there, every flag a line names exists on that verb, and every flag
// of a verb (but --db, --json and --help, which every command has) is on
// its line.
func TestREADMESynopsis(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	flagRe := regexp.MustCompile(`--[a-z][a-z-]*`)
	common := []string{"db", "json", "help", "version"}
	for name, app := range commands {
		a := app.Build(&command.Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard,
			Getenv: func(string) string { return "" }, Environ: func() []string { return nil }})
		lines := synopsis(string(readme), name)
		if len(lines) == 0 {
			t.Errorf("README: no synopsis under \"## %s —\"", name)
			continue
		}

		covered := map[string]bool{}
		for _, line := range lines {
			words := strings.Fields(line)
			var cmds []*cli.Command
			flags := a.Flags
			label := name
			if len(words) > 1 {
				for _, v := range strings.Split(strings.Trim(words[1], "[]"), "|") {
					if c := a.Command(v); c != nil {
						cmds = append(cmds, c)
						covered[v] = true
					}
				}
			}
			if len(cmds) > 0 {
				flags, label = cmds[0].Flags, name+" "+cmds[0].Name
			} else if app.Default != "" {
				flags, label = a.Command(app.Default).Flags, name+" "+app.Default
				covered[app.Default] = true
			}
			var have []string
			for _, f := range flags {
				have = append(have, f.Names()...)
			}
			named := map[string]bool{}
			for _, m := range flagRe.FindAllString(line, -1) {
				f := strings.TrimPrefix(m, "--")
				named[f] = true
				if !slices.Contains(have, f) && !slices.Contains(common, f) {
					t.Errorf("README synopsis of %s names --%s, which it does not have: %s", label, f, line)
				}
			}
			for _, f := range flags {
				n := f.Names()[0]
				if hidden, ok := f.(interface{ IsVisible() bool }); ok && !hidden.IsVisible() {
					continue
				}
				if !named[n] && !slices.Contains(common, n) {
					t.Errorf("README synopsis of %s lacks --%s: %s", label, n, line)
				}
			}
		}
		for _, c := range a.VisibleCommands() {
			if !covered[c.Name] && c.Name != "completion" {
				t.Errorf("README synopsis of %s has no line for its verb %q", name, c.Name)
			}
		}
	}
}

// synopsis is the indented block opening the README section "## name —",
// one entry per command line (continuation lines joined).
func synopsis(readme, name string) []string {
	_, rest, ok := strings.Cut(readme, "\n## "+name+" —")
	if !ok {
		return nil
	}
	var out []string
	started := false
	for _, line := range strings.Split(rest, "\n")[1:] {
		switch {
		case strings.HasPrefix(line, "    "+name+" ") || strings.HasPrefix(line, "    "+name+"\t"):
			out = append(out, strings.TrimSpace(line))
			started = true
		case started && strings.HasPrefix(line, "     ") && strings.TrimSpace(line) != "":
			out[len(out)-1] += " " + strings.TrimSpace(line)
		case started:
			return out
		}
	}
	return out
}
