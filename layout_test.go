//go:build linux

package teamkit_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCommandsDoNotImportEachOther keeps each command's package on its own:
// what two commands share lives in a pkg/ package of its own (pkg/text,
// pkg/roster, …), never in another command.
func TestCommandsDoNotImportEachOther(t *testing.T) {
	files, err := filepath.Glob("pkg/cmd/*/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no command sources found: %v", err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		own := "github.com/teamkit/teamkit/pkg/cmd/" + filepath.Base(filepath.Dir(f))
		for _, imp := range parsed.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "github.com/teamkit/teamkit/pkg/cmd/") && path != own {
				t.Errorf("%s imports %s: move what they share into a pkg/ package", f, path)
			}
		}
	}
}
