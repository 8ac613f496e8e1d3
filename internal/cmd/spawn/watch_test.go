package spawn_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/teamkit/teamkit/internal/cmd/spawn"
	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

// screen is a terminal's stdout that ends the command (as Ctrl-C would)
// once it has been drawn on twice.
type screen struct {
	mu     sync.Mutex
	b      bytes.Buffer
	cancel context.CancelFunc
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Write(p)
	if bytes.Count(s.b.Bytes(), []byte("\x1b[H")) >= 2 {
		s.cancel()
	}
	return len(p), nil
}

// On a terminal, spawn list --watch draws each table over the last: cursor
// home, every line cleared to its end, the rest of the screen cleared; an
// interrupt ends it with exit 0. (On a pipe: activity.txtar.)
func TestListWatchRedrawsInPlace(t *testing.T) {
	db := filepath.Join(t.TempDir(), "teamkit.db")
	st, err := mailbox.Open(context.Background(), db, mailbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.RecordLaunch(context.Background(), mailbox.Agent{Team: "t", Name: "w1", Type: "probe", Run: "r1", State: mailbox.StateStarting}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	// Generous: only a hang fails here, never a slow machine.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := &screen{cancel: cancel}
	var errb bytes.Buffer
	env := &command.Env{
		Stdin: strings.NewReader(""), Stdout: out, Stderr: &errb, StdoutTTY: true,
		Getenv:  func(k string) string { return map[string]string{"TEAMKIT_DB": db}[k] },
		Environ: func() []string { return nil },
		Now:     time.Now,
	}
	code := command.Run(ctx, spawn.App, env, []string{"spawn", "list", "t", "--watch", "--interval", "100ms"})
	if code != 0 || errb.Len() != 0 {
		t.Fatalf("exit %d, stderr %q; want 0 and nothing", code, errb.String())
	}
	got := out.b.String()
	frames := strings.Split(got, "\x1b[H")
	if len(frames) < 3 || frames[0] != "" {
		t.Fatalf("want two frames or more, each from the cursor home: %q", got)
	}
	for _, f := range frames[1:] {
		if !strings.HasPrefix(f, "NAME ") || !strings.Contains(f, "\nw1 ") || !strings.HasSuffix(f, "\x1b[K\n\x1b[J") ||
			strings.Count(f, "\n") != strings.Count(f, "\x1b[K\n") {
			t.Errorf("frame %q: want the table, every line cleared to its end, then the rest of the screen", f)
		}
	}
}
