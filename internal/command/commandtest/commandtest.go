// Package commandtest runs a teamkit command in-process for its tests: the
// one harness every internal/cmd/* test shares, with injected streams,
// environment and clock and a mailbox of its own, so each test reads as
// the command line it runs.
//
// Internal: a test kit; only tests import it, never a shipped binary.
package commandtest

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

// Result is what one run of the command left.
type Result struct {
	Code           int
	Stdout, Stderr string
}

// Harness runs one command against one mailbox.
type Harness struct {
	T    testing.TB
	App  command.App
	Name string // the program name, args[0]
	// DB is TEAMKIT_DB for every run ("" leaves it to Vars).
	DB string
	// Vars is the rest of the environment; a run sees nothing else.
	Vars map[string]string
	// Now is the command's clock; zero means time.Now.
	Now time.Time
}

// New is a harness for app, named name, with a fresh SQLite mailbox in a
// temporary directory and an empty environment.
func New(t testing.TB, name string, app command.App) *Harness {
	return &Harness{T: t, App: app, Name: name, DB: filepath.Join(t.TempDir(), "teamkit.db"), Vars: map[string]string{}}
}

// RunIn runs the command with args and stdin.
func (h *Harness) RunIn(stdin string, args ...string) Result {
	h.T.Helper()
	var out, errb bytes.Buffer
	vars := map[string]string{}
	if h.DB != "" {
		vars["TEAMKIT_DB"] = h.DB
	}
	for k, v := range h.Vars {
		vars[k] = v
	}
	now := time.Now
	if !h.Now.IsZero() {
		now = func() time.Time { return h.Now }
	}
	env := &command.Env{
		Stdin:   strings.NewReader(stdin),
		Stdout:  &out,
		Stderr:  &errb,
		Getenv:  func(k string) string { return vars[k] },
		Environ: func() []string { return nil },
		Now:     now,
	}
	code := command.Run(context.Background(), h.App, env, append([]string{h.Name}, args...))
	return Result{code, out.String(), errb.String()}
}

// Run runs the command with args and an empty stdin.
func (h *Harness) Run(args ...string) Result { h.T.Helper(); return h.RunIn("", args...) }

// Want runs args and fails the test unless they exit with code; it
// returns stdout.
func (h *Harness) Want(code int, args ...string) string {
	h.T.Helper()
	r := h.Run(args...)
	if r.Code != code {
		h.T.Fatalf("%s %q (env %v): exit %d, want %d; stdout %q stderr %q", h.Name, args, h.Vars, r.Code, code, r.Stdout, r.Stderr)
	}
	return r.Stdout
}

// Store opens the harness's mailbox directly, on the harness's clock; it
// is closed when the test ends.
func (h *Harness) Store() *mailbox.DB {
	h.T.Helper()
	o := mailbox.Options{}
	if !h.Now.IsZero() {
		o.Now = func() time.Time { return h.Now }
	}
	db, err := mailbox.Open(context.Background(), h.DB, o)
	if err != nil {
		h.T.Fatal(err)
	}
	h.T.Cleanup(func() { db.Close() })
	return db
}
