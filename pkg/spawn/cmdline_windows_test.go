package spawn

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teamkit/teamkit/pkg/agenttype"
)

// Windows passes a program one command line, of at most 32,767 UTF-16
// units with its NUL, not an argv: a briefing handed over as an argument
// (boot=argv, {prompt}) that fits Linux's 128 KiB an argument but not that
// is refused before launch, as one over Linux's limit is. Launched, it
// would fail on Windows ("The filename or extension is too long") and
// reach the agent cut short under Wine.
func TestLongCommandLineWindows(t *testing.T) {
	dir, err := os.MkdirTemp("", "cmdline")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	types, work := filepath.Join(dir, "types"), filepath.Join(dir, "work")
	for _, d := range []string{filepath.Join(types, "viaargv"), work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	conf := "command=" + filepath.ToSlash(self) + " {prompt}\r\n"
	if err := os.WriteFile(filepath.Join(types, "viaargv", "type.conf"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(types, "viaargv", "template.md"), []byte(`{{.Task}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	finder := agenttype.Finder{Dirs: []string{types}, Builtin: agenttype.Builtin()}
	for _, tt := range []struct {
		task    string
		refused bool
	}{
		{strings.Repeat("x", 30000), false},
		{strings.Repeat("x", 40000), true},
		{strings.Repeat("é", 30000), false}, // 60,000 bytes, 30,000 units
		{strings.Repeat("😀", 17000), true},  // 68,000 bytes, 34,000 units
	} {
		req := Request{Type: "viaargv", Team: "t", Name: "w1", Task: tt.task, Workdir: work,
			DBPath: filepath.Join(dir, "team.db"), StateDir: filepath.Join(dir, "state"),
			Environ: os.Environ(), NoAuthCheck: true}
		j, err := prepare(context.Background(), finder, req)
		if err != nil {
			t.Fatal(err)
		}
		err = j.writeRun()
		switch {
		case tt.refused && !errors.As(err, new(*agenttype.TooLongError)):
			t.Errorf("a %d-byte briefing as an argument: %v, want it refused before launch", len(tt.task), err)
		case !tt.refused && err != nil:
			t.Errorf("a %d-byte briefing as an argument: %v", len(tt.task), err)
		}
	}
}
