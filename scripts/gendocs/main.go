// Command gendocs writes the man pages (docs/man/) and the bash, zsh and
// fish completions (completions/) of the six commands, from the same
// urfave/cli definitions the commands run with. `make docs` runs it from the
// repository root; TestGeneratedDocs fails when the committed files differ.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/teamkit/teamkit/internal/cmd/ask"
	"github.com/teamkit/teamkit/internal/cmd/inbox"
	"github.com/teamkit/teamkit/internal/cmd/ready"
	"github.com/teamkit/teamkit/internal/cmd/resume"
	"github.com/teamkit/teamkit/internal/cmd/spawn"
	"github.com/teamkit/teamkit/internal/cmd/stale"
	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/internal/docgen"
)

func main() {
	apps := map[string]command.App{
		"inbox": inbox.App, "stale": stale.App, "ready": ready.App,
		"spawn": spawn.App, "ask": ask.App, "resume": resume.App,
	}
	var paths []string
	files := map[string]string{}
	for name, app := range apps {
		docs, err := docgen.Docs(name, app)
		if err != nil {
			fmt.Fprintf(os.Stderr, "gendocs: error: %s: %v\n", name, err)
			os.Exit(1)
		}
		for p, s := range docs {
			files[p] = s
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			fmt.Fprintf(os.Stderr, "gendocs: error: %v\n", err)
			os.Exit(1)
		}
		if err := os.WriteFile(p, []byte(files[p]), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "gendocs: error: %v\n", err)
			os.Exit(1)
		}
		fmt.Println(p)
	}
}
