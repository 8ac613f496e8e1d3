//go:build linux

package teamkit_test

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
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

// channelFiles are pkg/escalate's channels, one file each (Channel).
var channelFiles = []string{"github.go", "slack.go", "local.go"}

// TestChannelsStandAlone holds that pkg/escalate's channel files use
// nothing of each other's: no channel file names an identifier another
// declares at top level, so a channel can be added, changed or removed as
// one file. (They share one package, so go list cannot see this.)
func TestChannelsStandAlone(t *testing.T) {
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	declared := map[string]map[string]bool{}
	for _, name := range channelFiles {
		f, err := parser.ParseFile(fset, filepath.Join("pkg", "escalate", name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = f
		declared[name] = topLevel(f)
		if len(declared[name]) == 0 {
			t.Fatalf("%s declares nothing: is it still a channel file?", name)
		}
	}
	for _, name := range channelFiles {
		for used := range usedNames(files[name]) {
			for _, other := range channelFiles {
				if other != name && declared[other][used] && !declared[name][used] {
					t.Errorf("pkg/escalate/%s uses %s, declared in %s: channel files stand alone; "+
						"move what they share into a file of its own", name, used, other)
				}
			}
		}
	}
}

// topLevel is every name f declares outside a function, methods aside (a
// method is reached through its own channel's value).
func topLevel(f *ast.File) map[string]bool {
	names := map[string]bool{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				names[d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					names[s.Name.Name] = true
				case *ast.ValueSpec:
					for _, n := range s.Names {
						names[n.Name] = true
					}
				}
			}
		}
	}
	return names
}

// usedNames is every bare identifier f uses (a field or method after a dot
// belongs to its value's type, not to this package's names).
func usedNames(f *ast.File) map[string]bool {
	used := map[string]bool{}
	var walk func(n ast.Node) bool
	walk = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			// Its name is declared, not used; a method's may be any
			// channel's (Post).
			if n.Recv != nil {
				ast.Inspect(n.Recv, walk)
			}
			ast.Inspect(n.Type, walk)
			if n.Body != nil {
				ast.Inspect(n.Body, walk)
			}
			return false
		case *ast.Field:
			ast.Inspect(n.Type, walk) // field and parameter names are declared
			return false
		case *ast.SelectorExpr:
			ast.Inspect(n.X, walk)
			return false
		case *ast.KeyValueExpr:
			if _, ok := n.Key.(*ast.Ident); !ok {
				ast.Inspect(n.Key, walk) // a map key is an expression; a field name is not
			}
			ast.Inspect(n.Value, walk)
			return false
		case *ast.Ident:
			if n.Name != "_" {
				used[n.Name] = true
			}
		}
		return true
	}
	for _, d := range f.Decls {
		ast.Inspect(d, walk)
	}
	return used
}
