//go:build linux

package teamkit_test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/teamkit/teamkit/"

// listed is one package as `go list -deps -json` reports it.
type listed struct {
	ImportPath string
	Imports    []string
	Deps       []string
	Standard   bool
}

// listDeps is every package of the module and what each links (its
// non-test imports, transitively), as the shipped binaries see them.
func listDeps(t *testing.T) map[string]listed {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-tags", buildTags, "-json=ImportPath,Imports,Deps,Standard", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string]listed{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p listed
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(p.ImportPath, module) {
			pkgs[p.ImportPath] = p
		}
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages of the module; expected the whole tree", len(pkgs))
	}
	return pkgs
}

// isTestKit says whether a package exists only for tests: the stand-ins
// and harnesses under internal/ (pgtest, githubtest, slacktest, modeltest,
// mailboxtest, commandtest).
func isTestKit(path string) bool {
	return strings.HasPrefix(path, module+"internal/") && strings.HasSuffix(path, "test")
}

// startsNoAgent are the commands an agent runs every turn, which never
// start one: where the mailbox is, and where its run files live, they ask
// pkg/mailbox, never pkg/spawn.
var startsNoAgent = map[string]bool{
	module + "internal/cmd/inbox": true, module + "internal/cmd/stale": true, module + "internal/cmd/ready": true,
}

// TestLayering holds the package layout docs/DESIGN.md's seam map
// describes: each command's package stands alone (what two commands share
// lives in a package of its own), no test kit reaches a shipped package,
// and nothing under pkg/ (what an embedding program may import) depends on
// a command's internals.
func TestLayering(t *testing.T) {
	pkgs := listDeps(t)
	for path, p := range pkgs {
		for _, dep := range p.Deps {
			if !strings.HasPrefix(dep, module) || strings.HasPrefix(path, module+"scripts/") {
				continue // scripts/ are the benchmarks' and make test's own tools
			}
			switch {
			case strings.HasPrefix(path, module+"internal/cmd/") && strings.HasPrefix(dep, module+"internal/cmd/"):
				t.Errorf("%s links %s: commands never import each other; move what they share into a package of its own", path, dep)
			case !isTestKit(path) && isTestKit(dep):
				t.Errorf("%s links the test kit %s: test kits are for _test.go files only", path, dep)
			case strings.HasPrefix(path, module+"pkg/") && strings.HasPrefix(dep, module+"internal/cmd/"):
				t.Errorf("%s links %s: pkg/ must not depend on a command's internals", path, dep)
			case startsNoAgent[path] && dep == module+"pkg/spawn":
				t.Errorf("%s links %s: a command that starts no agent finds the mailbox and its run files through pkg/mailbox", path, dep)
			}
		}
	}
}
