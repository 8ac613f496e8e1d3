//go:build linux

package teamkit_test

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teamkit/teamkit/internal/command"
	"github.com/teamkit/teamkit/internal/pgtest"
)

// buildTags are the tags make install builds the commands with.
const buildTags = "urfave_cli_no_docs"

// goList is `go list -deps -tags buildTags pkgs`: every package the
// binaries link.
func goList(t *testing.T, pkgs ...string) map[string]bool {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-deps", "-tags", buildTags}, pkgs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		deps[p] = true
	}
	return deps
}

// inbox, stale and ready run on every turn of every agent: they link
// SQLite alone, without the PostgreSQL client (pgx, TLS, x509, x/text) or
// the man-page renderer, whose initializers and pages every run would pay
// (docs/BENCHMARKS.md). This pins it, so no import brings them back by
// accident.
func TestSQLiteCommandsLinkNoPostgres(t *testing.T) {
	deps := goList(t, "./cmd/inbox", "./cmd/stale", "./cmd/ready")
	banned := []string{"github.com/jackc/", "crypto/tls", "crypto/x509", "golang.org/x/text/",
		"github.com/cpuguy83/go-md2man", "github.com/russross/blackfriday",
		"github.com/teamkit/teamkit/pkg/mailbox/pgdriver", "github.com/teamkit/teamkit/internal/docgen"}
	for p := range deps {
		for _, b := range banned {
			if strings.HasPrefix(p, b) {
				t.Errorf("inbox, stale or ready links %s", p)
			}
		}
	}
	if !deps["modernc.org/sqlite"] {
		t.Error("go list found no modernc.org/sqlite: the check looks at the wrong packages")
	}
	// The other binaries serve PostgreSQL themselves.
	for _, cmd := range []string{"teamkit-postgres", "spawn", "ask", "resume"} {
		if !goList(t, "./cmd/"+cmd)["github.com/teamkit/teamkit/pkg/mailbox/pgdriver"] {
			t.Errorf("cmd/%s does not link the PostgreSQL client", cmd)
		}
	}
}

// inbox, stale and ready link only the mailbox methods they call. A type
// the linker takes for one converted to an interface (a generic's type
// argument, a parameter of a method of an interface's type) keeps every
// exported method it has, since text/template, linked for urfave/cli's
// help, calls methods by name: inbox once linked all of *mailbox.DB's
// (command.WithMailbox, mailbox's dbRef). Enqueue is spawn's and
// CreateAsk ask's; none of the three calls them.
func TestQuickCommandsLinkOnlyTheMailboxMethodsTheyCall(t *testing.T) {
	bin := t.TempDir()
	if out, err := exec.Command("go", "build", "-tags", buildTags, "-o", bin+"/", "./cmd/inbox", "./cmd/stale", "./cmd/ready").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, cmd := range []string{"inbox", "stale", "ready"} {
		f, err := elf.Open(filepath.Join(bin, cmd))
		if err != nil {
			t.Fatal(err)
		}
		syms, err := f.Symbols()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		linked := map[string]bool{}
		for _, s := range syms {
			linked[s.Name] = true
		}
		const db = "github.com/teamkit/teamkit/pkg/mailbox.(*DB)."
		if !linked[db+"Close"] {
			t.Fatalf("%s: no %sClose among %d symbols: the check looks at the wrong names", cmd, db, len(syms))
		}
		for _, m := range []string{"Enqueue", "CreateAsk"} {
			if linked[db+m] {
				t.Errorf("%s links %s%s, which it never calls", cmd, db, m)
			}
		}
	}
}

// An inbox built for SQLite alone still serves a postgres:// mailbox, by
// running teamkit-postgres from its own directory; without it, it says
// what is missing.
func TestPostgresHandOff(t *testing.T) {
	url := pgtest.URL(t)
	bin := t.TempDir()
	if out, err := exec.Command("go", "build", "-tags", buildTags, "-o", bin+"/", "./cmd/inbox", "./cmd/teamkit-postgres").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	run := func(inbox string, args ...string) (string, string, int) {
		cmd := exec.Command(inbox, args...)
		cmd.Env = append(os.Environ(), "TEAMKIT_DB="+url, "PATH=/usr/bin:/bin")
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.Stdin = strings.NewReader("from stdin\n")
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return stdout.String(), stderr.String(), code
	}
	inbox := filepath.Join(bin, "inbox")
	// The body comes from stdin: the hand-off passes the streams on.
	if out, errOut, code := run(inbox, "send", "demo", "w1", "--from", "lead"); code != 0 || out != "id=1\n" {
		t.Fatalf("inbox send on PostgreSQL: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if out, errOut, code := run(inbox, "demo", "w1"); code != 0 || !strings.Contains(out, "from stdin") {
		t.Fatalf("inbox drain on PostgreSQL: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	lone := filepath.Join(t.TempDir(), "inbox")
	if err := os.Link(inbox, lone); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := run(lone, "demo", "w1")
	if code != command.ExitFailure || !strings.Contains(errOut, "inbox: error: a postgres:// mailbox needs "+command.PostgresProgram) ||
		!strings.Contains(errOut, "inbox: hint: ") || strings.Contains(errOut, "goroutine") {
		t.Errorf("inbox without teamkit-postgres: exit %d, stderr %q", code, errOut)
	}
}
