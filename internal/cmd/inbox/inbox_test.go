//go:build !windows

package inbox_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/teamkit/teamkit/internal/cmd/inbox"
	"github.com/teamkit/teamkit/internal/command/commandtest"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// harness runs the inbox command in-process against one database.
type harness struct{ *commandtest.Harness }

type result = commandtest.Result

func newHarness(t *testing.T) *harness {
	h := &harness{commandtest.New(t, "inbox", inbox.App)}
	h.Now = t0
	h.Vars["HOME"] = t.TempDir()
	h.Vars["USER"] = "tester"
	return h
}

func (h *harness) runIn(stdin string, args ...string) result {
	h.T.Helper()
	return h.RunIn(stdin, args...)
}

func (h *harness) run(args ...string) result { h.T.Helper(); return h.RunIn("", args...) }

// ok runs args and fails the test unless they exit 0.
func (h *harness) ok(args ...string) string {
	h.T.Helper()
	return h.Want(0, args...)
}

// store opens the harness's database directly.
func (h *harness) store() *mailbox.DB { h.T.Helper(); return h.Store() }

func (h *harness) all(team string) []mailbox.Message {
	h.T.Helper()
	msgs, err := h.store().List(context.Background(), team, "", true)
	if err != nil {
		h.T.Fatal(err)
	}
	return msgs
}

func TestSendDrainRoundTrip(t *testing.T) {
	h := newHarness(t)
	if out := h.ok("send", "crew", "w", "hello there"); out != "id=1\n" {
		t.Fatalf("send printed %q, want id=1", out)
	}
	want := "--- id=1 from=tester to=w at=2025-03-01T12:00:00Z\nhello there\n"
	if out := h.ok("drain", "crew", "w"); out != want {
		t.Fatalf("drain printed %q, want %q", out, want)
	}
	if out := h.ok("crew", "w"); out != "" {
		t.Fatalf("second drain (default verb) printed %q, want nothing", out)
	}
	m := h.all("crew")
	if len(m) != 1 || m[0].ReadAt.IsZero() || m[0].From != "tester" || m[0].To != "w" {
		t.Fatalf("stored %+v", m)
	}
}

func TestFlagsAfterPositionals(t *testing.T) {
	h := newHarness(t)
	h.ok("send", "crew", "w", "first", "--from", "boss", "--subject", "the plan")
	h.ok("send", "--from", "boss", "crew", "w", "second", "--reply-to", "1")
	m := h.all("crew")
	if len(m) != 2 || m[0].From != "boss" || m[0].Subject != "the plan" || m[1].From != "boss" || m[1].ReplyTo != 1 {
		t.Fatalf("stored %+v", m)
	}
	out := h.ok("crew", "w", "--limit", "1", "--json")
	var got mailbox.Message
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.ID != 1 || strings.Count(out, "\n") != 1 {
		t.Fatalf("drain crew w --limit 1 --json printed %q (%v)", out, err)
	}
	out = h.ok("drain", "crew", "w", "--peek")
	if !strings.Contains(out, "second") || !strings.Contains(out, "reply_to=1") {
		t.Fatalf("drain --peek printed %q", out)
	}
	if out := h.ok("drain", "crew", "w", "--peek"); !strings.Contains(out, "second") {
		t.Fatalf("--peek marked the message read: second peek printed %q", out)
	}
}

func TestDoubleDashBody(t *testing.T) {
	h := newHarness(t)
	h.ok("send", "crew", "w", "--from", "boss", "--", "-n is not a flag")
	h.ok("send", "crew", "w", "--", "--json")
	m := h.all("crew")
	if len(m) != 2 || m[0].Body != "-n is not a flag" || m[0].From != "boss" || m[1].Body != "--json" {
		t.Fatalf("stored %+v", m)
	}
	// Without "--" the dash word is a flag, and an unknown one.
	r := h.run("send", "crew", "w", "-n is not a flag")
	if r.Code != 64 {
		t.Fatalf("send with an unknown flag: exit %d, want 64", r.Code)
	}
	if len(h.all("crew")) != 2 {
		t.Fatal("a refused send stored a message")
	}
}

func TestStdinBody(t *testing.T) {
	h := newHarness(t)
	body := "line one\n\tline two\n"
	if r := h.runIn(body, "send", "crew", "w", "-"); r.Code != 0 {
		t.Fatalf("send -: %+v", r)
	}
	if r := h.runIn(body, "send", "crew", "w"); r.Code != 0 {
		t.Fatalf("send without BODY: %+v", r)
	}
	m := h.all("crew")
	if len(m) != 2 || m[0].Body != body || m[1].Body != body {
		t.Fatalf("stdin bodies stored as %+v", m)
	}
	r := h.runIn("", "send", "crew", "w")
	if r.Code != 64 || !strings.Contains(r.Stderr, "empty") || !strings.Contains(r.Stderr, "stdin") {
		t.Fatalf("empty stdin: %+v, want exit 64 naming the empty body and stdin", r)
	}
	r = h.runIn("bad \xff utf-8", "send", "crew", "w")
	if r.Code != 64 || len(h.all("crew")) != 2 {
		t.Fatalf("invalid UTF-8 body: %+v, want exit 64 and nothing stored", r)
	}
}

func TestIdentityFromEnv(t *testing.T) {
	h := newHarness(t)
	h.Vars["TEAMKIT_TEAM"] = "crew"
	h.Vars["TEAMKIT_AGENT"] = "w1"
	// Inside an agent: "send <to> <body>", from is the agent.
	h.ok("send", "boss", "done with 1")
	m := h.all("crew")
	if len(m) != 1 || m[0].Team != "crew" || m[0].To != "boss" || m[0].From != "w1" || m[0].Body != "done with 1" {
		t.Fatalf("stored %+v", m)
	}
	// Plain "inbox" drains crew/w1.
	h.Vars["TEAMKIT_AGENT"] = "boss"
	if out := h.ok(); !strings.Contains(out, "done with 1") {
		t.Fatalf("bare inbox printed %q", out)
	}
	h.ok("send", "boss", "two")
	if out := h.ok("--json"); !strings.Contains(out, `"body":"two"`) {
		t.Fatalf("inbox --json printed %q", out)
	}
	// "drain <name>" with the team from the environment.
	h.ok("send", "other", "three")
	if out := h.ok("drain", "other"); !strings.Contains(out, "three") {
		t.Fatalf("drain other printed %q", out)
	}
	if out := h.ok("list"); !strings.Contains(out, "FIRST LINE") {
		t.Fatalf("list printed %q", out)
	}
	// Without the variables the identity is required.
	delete(h.Vars, "TEAMKIT_TEAM")
	delete(h.Vars, "TEAMKIT_AGENT")
	r := h.run()
	if r.Code != 64 || !strings.Contains(r.Stderr, "TEAMKIT_TEAM") {
		t.Fatalf("bare inbox without identity: %+v", r)
	}
}

func TestSendArgs(t *testing.T) {
	for _, tc := range []struct {
		name      string
		envTeam   string
		args      []string
		stdin     string
		team, to  string
		body      string
		wantUsage bool
	}{
		{"three args", "", []string{"crew", "w", "b"}, "", "crew", "w", "b", false},
		{"three args ignore env team", "other", []string{"crew", "w", "b"}, "", "crew", "w", "b", false},
		{"two args no env: team to, body on stdin", "", []string{"crew", "w"}, "from stdin", "crew", "w", "from stdin", false},
		{"two args, first is the env team: team to", "crew", []string{"crew", "w"}, "from stdin", "crew", "w", "from stdin", false},
		{"two args, env team: to body", "crew", []string{"w", "hello"}, "", "crew", "w", "hello", false},
		{"one arg with env team: to, stdin", "crew", []string{"w"}, "piped", "crew", "w", "piped", false},
		{"one arg without env team", "", []string{"w"}, "x", "", "", "", true},
		{"no args", "crew", nil, "x", "", "", "", true},
		{"four args", "", []string{"a", "b", "c", "d"}, "", "", "", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			if tc.envTeam != "" {
				h.Vars["TEAMKIT_TEAM"] = tc.envTeam
			}
			r := h.runIn(tc.stdin, append([]string{"send"}, tc.args...)...)
			if tc.wantUsage {
				if r.Code != 64 || strings.Count(r.Stderr, "inbox: error:") != 1 {
					t.Fatalf("exit %d stderr %q, want a usage error", r.Code, r.Stderr)
				}
				if _, err := os.Stat(h.DB); err == nil {
					t.Fatal("a usage error created the database")
				}
				return
			}
			if r.Code != 0 {
				t.Fatalf("exit %d stderr %q", r.Code, r.Stderr)
			}
			m := h.all(tc.team)
			if len(m) != 1 || m[0].To != tc.to || m[0].Body != tc.body {
				t.Fatalf("stored %+v, want to=%s body=%q in team %s", m, tc.to, tc.body, tc.team)
			}
		})
	}
}

func TestBadNames(t *testing.T) {
	h := newHarness(t)
	h.ok("send", "crew", "w", "keep me")
	bad := []string{"a/b", "..", "a b", "a;b", "$(x)", strings.Repeat("x", 65), "../etc", ""}
	for _, name := range bad {
		for _, args := range [][]string{
			{"send", name, "w", "body"},
			{"send", "crew", name, "body"},
			{"drain", name, "w"},
			{"drain", "crew", name},
			{name, "w"},
			{"crew", name, "--peek"},
			{"list", name},
			{"list", "crew", name},
		} {
			r := h.run(args...)
			lines := strings.Split(strings.TrimRight(r.Stderr, "\n"), "\n")
			if r.Code != 64 || len(lines) != 1 || !strings.HasPrefix(lines[0], "inbox: error:") || r.Stdout != "" {
				t.Errorf("inbox %q: exit %d, stdout %q, stderr %q; want exit 64 and one line on stderr", args, r.Code, r.Stdout, r.Stderr)
			}
		}
	}
	for _, name := range bad[:len(bad)-1] { // --from "" means "not given"
		if r := h.run("send", "crew", "w", "body", "--from", name); r.Code != 64 || strings.Count(r.Stderr, "\n") != 1 {
			t.Errorf("send --from %q: exit %d, stderr %q; want 64 and one line", name, r.Code, r.Stderr)
		}
	}
	m := h.all("crew")
	if len(m) != 1 || !m[0].ReadAt.IsZero() {
		t.Fatalf("bad names changed the mailbox: %+v", m)
	}
}

func TestBadNamesTouchNothing(t *testing.T) {
	// A refused name never reaches the database: not even its file is made.
	h := newHarness(t)
	for _, args := range [][]string{{"send", "a/b", "w", "x"}, {"drain", "crew", "$(x)"}, {"list", ".."}} {
		if r := h.run(args...); r.Code != 64 {
			t.Fatalf("inbox %q: exit %d", args, r.Code)
		}
	}
	if _, err := os.Stat(h.DB); !os.IsNotExist(err) {
		t.Fatalf("database file exists after refused names: %v", err)
	}
}

func TestWait(t *testing.T) {
	h := newHarness(t)
	h.store() // create the mailbox
	r := h.run("drain", "crew", "w", "--wait", "100ms")
	if r.Code != 2 || r.Stdout != "" || !strings.Contains(r.Stderr, "no message") {
		t.Fatalf("--wait with nothing coming: %+v, want exit 2", r)
	}

	// A message sent while the drain waits ends the wait.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		db, err := mailbox.Open(context.Background(), h.DB, mailbox.Options{})
		if err != nil {
			t.Error(err)
			return
		}
		defer db.Close()
		if _, err := db.Send(context.Background(), mailbox.Message{Team: "crew", From: "boss", To: "w", Body: "wake up"}); err != nil {
			t.Error(err)
		}
	}()
	r = h.run("crew", "w", "--wait", "60s")
	wg.Wait()
	if r.Code != 0 || !strings.Contains(r.Stdout, "wake up") {
		t.Fatalf("--wait with a message sent meanwhile: %+v, want exit 0 and the message", r)
	}
	if m := h.all("crew"); len(m) != 1 || m[0].ReadAt.IsZero() {
		t.Fatalf("waited-for message not marked read: %+v", m)
	}
	// --wait --peek returns at once when there is mail, and leaves it unread.
	h.ok("send", "crew", "w", "peeked")
	if out := h.ok("crew", "w", "--wait", "60s", "--peek"); !strings.Contains(out, "peeked") {
		t.Fatalf("--wait --peek printed %q", out)
	}
	if out := h.ok("crew", "w"); !strings.Contains(out, "peeked") {
		t.Fatalf("--peek under --wait marked the message read; drain printed %q", out)
	}
}

func TestFormat(t *testing.T) {
	h := newHarness(t)
	h.ok("send", "crew", "w", "subject line\nmore\nand more", "--from", "boss")
	h.ok("send", "crew", "w", "one line")
	out := h.ok("crew", "w", "--format", "{{.ID}} {{.From}}: {{firstline .Body}}")
	if out != "1 boss: subject line\n2 tester: one line\n" {
		t.Fatalf("--format printed %q", out)
	}
	r := h.run("crew", "w", "--format", "{{.Nope")
	if r.Code != 64 {
		t.Fatalf("bad --format: exit %d, want 64", r.Code)
	}
	// A field a message does not have is a usage error at once, on an
	// empty inbox too; an index past a short body is the data's, not the
	// template's, and is left to the messages themselves.
	r = h.run("crew", "w", "--format", "{{.ID}} {{.Nope}}")
	if r.Code != 64 || !strings.Contains(r.Stderr, "can't evaluate field Nope") || !strings.Contains(r.Stderr, "hint: a message's fields are .ID") {
		t.Fatalf("--format naming no field: exit %d, stderr %q; want 64 and the field named", r.Code, r.Stderr)
	}
	if r := h.run("crew", "w", "--peek", "--format", "{{slice .Body 0 40}}"); r.Code == 64 {
		t.Fatalf("a template the sample's short body fails was refused: %q", r.Stderr)
	}
}

func TestJSONFields(t *testing.T) {
	h := newHarness(t)
	sent := h.ok("send", "crew", "w", "<b>body & more</b>", "--subject", "s", "--json")
	h.ok("send", "crew", "w", "reply", "--reply-to", "1")
	want := []string{"body", "created_at", "from", "id", "read_at", "reply_to", "subject", "team", "to"}
	keys := func(line string) (map[string]any, []string) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not JSON: %q: %v", line, err)
		}
		var k []string
		for key := range m {
			k = append(k, key)
		}
		sort.Strings(k)
		return m, k
	}
	if _, k := keys(sent); strings.Join(k, ",") != strings.Join(want, ",") {
		t.Fatalf("send --json keys %v, want %v", k, want)
	}
	for _, args := range [][]string{{"list", "crew", "--json"}, {"drain", "crew", "w", "--json"}, {"list", "crew", "--all", "--json"}} {
		out := h.ok(args...)
		lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
		if len(lines) != 2 {
			t.Fatalf("inbox %q printed %d lines, want one object per message: %q", args, len(lines), out)
		}
		first, k := keys(lines[0])
		if strings.Join(k, ",") != strings.Join(want, ",") {
			t.Fatalf("inbox %q keys %v, want exactly %v", args, k, want)
		}
		second, _ := keys(lines[1])
		if first["id"] != float64(1) || first["team"] != "crew" || first["to"] != "w" || first["from"] != "tester" ||
			first["subject"] != "s" || first["body"] != "<b>body & more</b>" || first["reply_to"] != nil ||
			first["created_at"] != "2025-03-01T12:00:00Z" || second["reply_to"] != float64(1) {
			t.Fatalf("inbox %q: wrong values %v / %v", args, first, second)
		}
		wantRead := any(nil) // unread, and drain prints before it marks
		if args[len(args)-2] == "--all" {
			wantRead = "2025-03-01T12:00:00Z"
		}
		if first["read_at"] != wantRead {
			t.Fatalf("inbox %q: read_at %v, want %v", args, first["read_at"], wantRead)
		}
	}
	if !strings.Contains(sent, `"body":"<b>body & more</b>"`) {
		t.Fatalf("JSON escaped HTML: %s", sent)
	}
}

func TestList(t *testing.T) {
	h := newHarness(t)
	h.ok("send", "crew", "a", "to a\nsecond line")
	h.ok("send", "crew", "b", "to b")
	h.ok("drain", "crew", "a")
	out := h.ok("list", "crew")
	if !strings.HasPrefix(out, "ID") || strings.Contains(out, "to a") || !strings.Contains(out, "to b") {
		t.Fatalf("list crew printed %q", out)
	}
	out = h.ok("list", "crew", "a", "--all")
	if !strings.Contains(out, "to a") || strings.Contains(out, "second line") || strings.Contains(out, "to b") {
		t.Fatalf("list crew a --all printed %q", out)
	}
	if r := h.run("list", "crew", "a", "b"); r.Code != 64 {
		t.Fatalf("list with 3 args: exit %d", r.Code)
	}
	if r := h.run("drain", "crew", "w", "--limit", "-1"); r.Code != 64 {
		t.Fatalf("--limit -1: exit %d", r.Code)
	}
	if r := h.run("drain", "crew", "w", "extra"); r.Code != 64 {
		t.Fatalf("drain with an extra argument: exit %d", r.Code)
	}
}

// Every verb refuses a bad command line before the mailbox is opened:
// not even its file is made.
func TestVerbsRefusedBeforeTheMailbox(t *testing.T) {
	h := newHarness(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"send", "crew", "w", "hi", "--reply-to", "0"}, "--reply-to 0: want the id of a message"},
		{[]string{"send", "crew", "w", "hi", "--subject", "two\nlines"}, "--subject must be one line"},
		{[]string{"send", "crew", "w", ""}, "empty"},
		{[]string{"drain", "crew", "w", "--reply-to", "-3"}, "--reply-to -3"},
		{[]string{"drain", "crew", "w", "--wait", "-1s"}, "--wait"},
		{[]string{"drain", "crew", "w", "--lease", "0s"}, "--lease"},
		{[]string{"drain", "crew", "w", "--format", "{{.ID"}, "--format"},
		{[]string{"list", "crew", "a", "b"}, "usage: inbox list"},
		{[]string{"prune", "crew"}, "missing --older D"},
		{[]string{"prune", "crew", "--older", "0s"}, "--older 0s"},
		{[]string{"prune", "crew", "extra", "--older", "1h"}, `unexpected argument "extra"`},
		{[]string{"copy"}, "missing --to DB"},
		{[]string{"copy", "--to", h.DB}, "--to is the mailbox being copied"},
		{[]string{"copy", "extra", "--to", "x.db"}, `unexpected argument "extra"`},
	} {
		r := h.run(c.args...)
		if r.Code != 64 || !strings.Contains(r.Stderr, c.want) || r.Stdout != "" {
			t.Errorf("inbox %q: exit %d, stdout %q, stderr %q; want 64 and %q", c.args, r.Code, r.Stdout, r.Stderr, c.want)
		}
	}
	if _, err := os.Stat(h.DB); !os.IsNotExist(err) {
		t.Fatalf("a refused verb touched the mailbox %s (%v)", h.DB, err)
	}
}

// prune removes read messages older than --older, never an unread one,
// and only says what it would remove with --dry-run.
func TestPrune(t *testing.T) {
	h := newHarness(t)
	h.ok("send", "crew", "w", "old and read")
	h.ok("send", "crew", "w", "--", "old but unread")
	h.ok("crew", "w", "--limit", "1")
	h.Now = t0.Add(48 * time.Hour)
	if out := h.ok("prune", "crew", "--older", "1d", "--dry-run"); out != "would-prune=crew messages=1 run_files=0 older=24h0m0s\n" {
		t.Errorf("prune --dry-run printed %q", out)
	}
	if n := len(h.all("crew")); n != 2 {
		t.Fatalf("--dry-run removed messages: %d left", n)
	}
	out := h.ok("prune", "crew", "--older", "1d", "--json")
	var got struct {
		Team     string   `json:"team"`
		DryRun   bool     `json:"dry_run"`
		Messages int64    `json:"messages"`
		Files    []string `json:"files"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.Team != "crew" || got.DryRun || got.Messages != 1 || got.Files == nil {
		t.Errorf("prune --json printed %q (%v)", out, err)
	}
	if m := h.all("crew"); len(m) != 1 || m[0].Body != "old but unread" {
		t.Errorf("after prune: %+v; want the unread message alone", m)
	}
}

// copy copies every message, with its id, into an empty mailbox.
func TestCopy(t *testing.T) {
	h := newHarness(t)
	h.ok("send", "crew", "w", "one")
	h.ok("send", "crew", "w", "two")
	to := filepath.Join(t.TempDir(), "copy.db")
	out := h.ok("copy", "--to", to)
	if !strings.HasPrefix(out, "copied=yes from="+h.DB+" to="+to+" ") || !strings.Contains(out, " messages=2") {
		t.Errorf("copy printed %q", out)
	}
	dst, err := mailbox.Open(context.Background(), to, mailbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	msgs, err := dst.List(context.Background(), "crew", "", true)
	if err != nil || len(msgs) != 2 || msgs[0].ID != 1 || msgs[1].Body != "two" {
		t.Errorf("the copy holds %+v (%v)", msgs, err)
	}
	if r := h.run("copy", "--to", to); r.Code == 0 {
		t.Errorf("a second copy into the same mailbox succeeded: %q", r.Stdout)
	}
}

// --- The real binary as an unprivileged user ---

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

func inboxBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		out, err := exec.Command("go", "env", "GOMOD").Output()
		if err != nil {
			buildErr = fmt.Errorf("go env GOMOD: %v", err)
			return
		}
		root := filepath.Dir(strings.TrimSpace(string(out)))
		if binDir, buildErr = os.MkdirTemp("", "teamkit-bin-"); buildErr != nil {
			return
		}
		// Reachable by the unprivileged user that runs it.
		os.Chmod(binDir, 0o755)
		cmd := exec.Command("go", "build", "-o", filepath.Join(binDir, "inbox"), "./cmd/inbox")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/inbox: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(binDir, "inbox")
}

// asUser runs the inbox binary as an unprivileged user: uid/gid 65534 when
// the tests run as root (permission bits do not bind root), else as us.
func asUser(t *testing.T, args ...string) result {
	t.Helper()
	cmd := exec.Command(inboxBinary(t), args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent"}
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run inbox: %v", err)
	}
	return result{Code: code, Stdout: out.String(), Stderr: errb.String()}
}

// sharedDir is a directory the unprivileged user can reach (t.TempDir's
// parents are private to us).
func sharedDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "teamkit-perm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755); os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// seedDB makes a mailbox with one unread message at dir/teamkit.db.
func seedDB(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "teamkit.db")
	db, err := mailbox.Open(context.Background(), path, mailbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Send(context.Background(), mailbox.Message{Team: "crew", From: "boss", To: "w", Body: "still unread"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func checkUnchanged(t *testing.T, path string, before []byte) {
	t.Helper()
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Fatal("the database file changed")
	}
	db, err := mailbox.Open(context.Background(), path, mailbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	msgs, err := db.List(context.Background(), "crew", "", true)
	if err != nil || len(msgs) != 1 || !msgs[0].ReadAt.IsZero() {
		t.Fatalf("mailbox after the refused commands: %+v, %v; want the one unread message", msgs, err)
	}
}

// checkFailure wants exit 1, nothing on stdout, and one error line on
// stderr (followed at most by the runtime's one hint line).
func checkFailure(t *testing.T, args []string, r result, want string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(r.Stderr, "\n"), "\n")
	ok := r.Code == 1 && r.Stdout == "" && len(lines) >= 1 && len(lines) <= 2 &&
		strings.HasPrefix(lines[0], "inbox: error:") && strings.Contains(lines[0], want)
	if len(lines) == 2 && !strings.HasPrefix(lines[1], "inbox: hint:") {
		ok = false
	}
	if !ok {
		t.Fatalf("inbox %q: exit %d, stdout %q, stderr %q; want exit 1, no output, one error line saying %q", args, r.Code, r.Stdout, r.Stderr, want)
	}
}

func TestReadOnlyDatabaseFile(t *testing.T) {
	dir := sharedDir(t)
	path := seedDB(t, dir)
	// The directory is writable by the user, the file is not.
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	for _, args := range [][]string{
		{"send", "crew", "w", "blocked", "--db", path},
		// drain must not print what it cannot mark read.
		{"drain", "crew", "w", "--db", path},
	} {
		checkFailure(t, args, asUser(t, args...), "read-only")
	}
	os.Chmod(path, 0o644)
	checkUnchanged(t, path, before)
}

func TestReadOnlyDirectory(t *testing.T) {
	dir := sharedDir(t)
	path := seedDB(t, dir)
	// The file is writable by the user, its directory (where SQLite's -wal
	// and -shm files live) is not.
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	for _, args := range [][]string{
		{"send", "crew", "w", "blocked", "--db", path},
		{"drain", "crew", "w", "--db", path},
	} {
		checkFailure(t, args, asUser(t, args...), "read-only")
	}
	os.Chmod(dir, 0o755)
	checkUnchanged(t, path, before)
}

// A database locked past the busy timeout: one error line and a hint,
// exit 1, and nothing written by either the send or the drain.
func TestLockedDatabase(t *testing.T) {
	h := newHarness(t)
	h.ok("send", "t", "w1", "queued before the lock")
	h.Vars["TEAMKIT_BUSY_TIMEOUT"] = "200ms"

	holder, err := sql.Open("sqlite", "file:"+h.DB+"?_busy_timeout=1000")
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	conn, err := holder.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"send", "t", "w1", "blocked"}, {"drain", "t", "w1"}} {
		r := h.run(args...)
		lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
		if r.Code != 1 || r.Stdout != "" || !strings.HasPrefix(lines[0], "inbox: error: ") ||
			!strings.Contains(lines[0], "database is locked by another process") ||
			len(lines) != 2 || !strings.HasPrefix(lines[1], "inbox: hint: ") {
			t.Errorf("inbox %q while locked: exit %d, stdout %q, stderr %q", args, r.Code, r.Stdout, r.Stderr)
		}
	}
	conn.ExecContext(context.Background(), "ROLLBACK")
	conn.Close()

	msgs := h.all("t")
	if len(msgs) != 1 || !msgs[0].ReadAt.IsZero() {
		t.Fatalf("after the lock: %+v; want only the first message, still unread", msgs)
	}
}

// TestCopyTargetHintsNameTo: a target that cannot be opened is --to's
// fault, so the hint names --to, never --db (which the user got right).
func TestCopyTargetHintsNameTo(t *testing.T) {
	h := newHarness(t)
	h.ok("send", "crew", "w", "one")
	junk := filepath.Join(t.TempDir(), "junk.db")
	if err := os.WriteFile(junk, []byte("not a database, not empty either\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, to := range []string{
		filepath.Join(t.TempDir(), "no", "such", "dir", "x.db"), // no directory
		"mysql://h/teamkit", // no backend
		junk,                // not a mailbox
	} {
		r := h.run("copy", "--to", to)
		if r.Code != 1 || !strings.Contains(r.Stderr, "inbox: hint: ") {
			t.Errorf("copy --to %s: exit %d, stderr %q; want exit 1 and a hint", to, r.Code, r.Stderr)
			continue
		}
		if strings.Contains(r.Stderr, "--db") || !strings.Contains(r.Stderr[strings.Index(r.Stderr, "inbox: hint: "):], "--to") {
			t.Errorf("copy --to %s: the hint must name --to, not --db:\n%s", to, r.Stderr)
		}
	}
}
