package mailbox_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/teamkit/teamkit/internal/pgtest"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

// clock is a settable fake time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func open(t testing.TB, path string, c *clock) *mailbox.DB {
	t.Helper()
	o := mailbox.Options{}
	if c != nil {
		o.Now = c.Now
	}
	db, err := mailbox.Open(context.Background(), path, o)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// backend is a store every behaviour test runs against: the same test
// code, SQLite and PostgreSQL (see internal/pgtest for where the server comes
// from).
type backend struct {
	name string
	// fresh returns the location of a new, empty mailbox.
	fresh func(t testing.TB) string
}

var (
	sqliteBackend   = backend{"sqlite", func(t testing.TB) string { return filepath.Join(t.TempDir(), "teamkit.db") }}
	postgresBackend = backend{"postgres", pgtest.URL}
	backends        = []backend{sqliteBackend, postgresBackend}
)

// eachBackend runs test once per backend, as subtests named after them.
func eachBackend(t *testing.T, test func(t *testing.T, be backend)) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) { test(t, be) })
	}
}

// stamped reports whether got, an agent's time, is now by the database's
// clock: the test's clock on SQLite; on PostgreSQL, whose server stamps the
// agents' times itself (liveness is judged by one clock), the server's,
// within a minute.
func stamped(t testing.TB, db *mailbox.DB, c *clock, got time.Time) bool {
	if db.Backend() != "postgres" {
		return got.Equal(c.Now())
	}
	now, err := db.Now(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return got.After(now.Add(-time.Minute)) && !got.After(now)
}

func newDB(t testing.TB, be backend) (*mailbox.DB, *clock, string) {
	t.Helper()
	c := newClock()
	path := be.fresh(t)
	return open(t, path, c), c, path
}

// raw opens the mailbox with database/sql directly, bypassing the store;
// its queries take ? placeholders on either backend.
func raw(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := mailbox.OpenRaw(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func count(t testing.TB, db *sql.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func send(t testing.TB, db *mailbox.DB, team, from, to, body string) mailbox.Message {
	t.Helper()
	m, err := db.Send(context.Background(), mailbox.Message{Team: team, From: from, To: to, Body: body})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	return m
}

func ids(msgs []mailbox.Message) []int64 {
	out := make([]int64, len(msgs))
	for i, m := range msgs {
		out[i] = m.ID
	}
	return out
}

func equalIDs(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func keep(msgs *[]mailbox.Message) func([]mailbox.Message) error {
	return func(m []mailbox.Message) error { *msgs = append(*msgs, m...); return nil }
}

func TestSendPeekDrain(t *testing.T) { eachBackend(t, testSendPeekDrain) }

func testSendPeekDrain(t *testing.T, be backend) {
	ctx := context.Background()
	db, c, _ := newDB(t, be)
	m1, err := db.Send(ctx, mailbox.Message{Team: "t", From: "boss", To: "w", Subject: "s1", Body: "one", ReplyTo: 0})
	if err != nil {
		t.Fatal(err)
	}
	if m1.ID == 0 || !m1.CreatedAt.Equal(c.Now()) {
		t.Fatalf("Send returned %+v, want an id and the clock's time", m1)
	}
	c.Add(time.Second)
	m2, err := db.Send(ctx, mailbox.Message{Team: "t", From: "boss", To: "w", Body: "two", ReplyTo: m1.ID})
	if err != nil {
		t.Fatal(err)
	}
	send(t, db, "t", "boss", "other", "not for w")
	send(t, db, "t2", "boss", "w", "other team")
	m3 := send(t, db, "t", "x", "w", "three")
	want := []int64{m1.ID, m2.ID, m3.ID}

	peek, err := db.Peek(ctx, "t", "w", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !equalIDs(ids(peek), want) {
		t.Fatalf("Peek = %v, want %v", ids(peek), want)
	}
	if peek[1].ReplyTo != m1.ID || peek[0].Subject != "s1" || peek[1].Body != "two" || !peek[0].ReadAt.IsZero() {
		t.Fatalf("Peek lost fields: %+v", peek)
	}
	// Peek leaves everything unread.
	again, _ := db.Peek(ctx, "t", "w", 0)
	if len(again) != 3 {
		t.Fatalf("second Peek got %d, want 3", len(again))
	}

	c.Add(time.Minute)
	var delivered []mailbox.Message
	got, err := db.Drain(ctx, "t", "w", 0, keep(&delivered))
	if err != nil {
		t.Fatal(err)
	}
	if !equalIDs(ids(got), want) || !equalIDs(ids(delivered), want) {
		t.Fatalf("Drain = %v delivered %v, want %v oldest first", ids(got), ids(delivered), want)
	}
	for _, m := range got {
		if !m.ReadAt.Equal(c.Now()) {
			t.Fatalf("drained message %d read_at %v, want %v", m.ID, m.ReadAt, c.Now())
		}
	}
	stored, err := db.Message(ctx, m2.ID)
	if err != nil || !stored.ReadAt.Equal(c.Now()) {
		t.Fatalf("Message(%d) = %+v, %v; want read at %v", m2.ID, stored, err, c.Now())
	}
	// Nothing left; deliver is not called for an empty inbox.
	got, err = db.Drain(ctx, "t", "w", 0, func([]mailbox.Message) error { t.Error("deliver called on empty inbox"); return nil })
	if err != nil || len(got) != 0 {
		t.Fatalf("second Drain = %v, %v; want nothing", got, err)
	}
	// Other recipients and teams are untouched.
	if p, _ := db.Peek(ctx, "t", "other", 0); len(p) != 1 {
		t.Fatalf("other's inbox has %d, want 1", len(p))
	}
	if p, _ := db.Peek(ctx, "t2", "w", 0); len(p) != 1 {
		t.Fatalf("t2/w inbox has %d, want 1", len(p))
	}
	if _, err := db.Message(ctx, 9999); !errors.Is(err, mailbox.ErrNotFound) {
		t.Fatalf("Message(9999) err = %v, want ErrNotFound", err)
	}
}

func TestDrainDeliverFailureLeavesUnread(t *testing.T) {
	eachBackend(t, testDrainDeliverFailureLeavesUnread)
}

func testDrainDeliverFailureLeavesUnread(t *testing.T, be backend) {
	ctx := context.Background()
	db, _, _ := newDB(t, be)
	for _, b := range []string{"a", "b", "c"} {
		send(t, db, "t", "s", "w", b)
	}
	boom := errors.New("stdout closed")
	var calls int
	got, err := db.Drain(ctx, "t", "w", 0, func(m []mailbox.Message) error { calls++; return boom })
	if !errors.Is(err, boom) || got != nil || calls != 1 {
		t.Fatalf("Drain with failing deliver = %v, %v (calls %d); want the deliver error", got, err, calls)
	}
	unread, _ := db.Peek(ctx, "t", "w", 0)
	if len(unread) != 3 {
		t.Fatalf("after failed delivery %d unread, want all 3", len(unread))
	}
	for _, m := range unread {
		if !m.ReadAt.IsZero() {
			t.Fatalf("message %d marked read after failed delivery", m.ID)
		}
	}
	var delivered []mailbox.Message
	if _, err := db.Drain(ctx, "t", "w", 0, keep(&delivered)); err != nil || len(delivered) != 3 {
		t.Fatalf("retry delivered %d (%v), want 3", len(delivered), err)
	}
}

func TestDrainLimit(t *testing.T) { eachBackend(t, testDrainLimit) }

func testDrainLimit(t *testing.T, be backend) {
	ctx := context.Background()
	db, _, _ := newDB(t, be)
	var all []int64
	for i := 0; i < 5; i++ {
		all = append(all, send(t, db, "t", "s", "w", "m").ID)
	}
	p, _ := db.Peek(ctx, "t", "w", 2)
	if !equalIDs(ids(p), all[:2]) {
		t.Fatalf("Peek limit 2 = %v, want %v", ids(p), all[:2])
	}
	var got []int64
	for _, want := range [][]int64{all[:2], all[2:4], all[4:], nil} {
		var d []mailbox.Message
		if _, err := db.Drain(ctx, "t", "w", 2, keep(&d)); err != nil {
			t.Fatal(err)
		}
		if !equalIDs(ids(d), want) {
			t.Fatalf("Drain limit 2 = %v, want %v", ids(d), want)
		}
		got = append(got, ids(d)...)
		// Messages past the limit stay unread.
		left, _ := db.Peek(ctx, "t", "w", 0)
		if len(left) != len(all)-len(got) {
			t.Fatalf("after draining %d, %d unread; want %d", len(got), len(left), len(all)-len(got))
		}
	}
}

func TestList(t *testing.T) { eachBackend(t, testList) }

func testList(t *testing.T, be backend) {
	ctx := context.Background()
	db, _, _ := newDB(t, be)
	a := send(t, db, "t", "s", "a", "1")
	b := send(t, db, "t", "s", "b", "2")
	a2 := send(t, db, "t", "s", "a", "3")
	send(t, db, "u", "s", "a", "elsewhere")
	if _, err := db.Drain(ctx, "t", "a", 1, func([]mailbox.Message) error { return nil }); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		to   string
		all  bool
		want []int64
	}{
		{"", false, []int64{b.ID, a2.ID}},
		{"", true, []int64{a.ID, b.ID, a2.ID}},
		{"a", false, []int64{a2.ID}},
		{"a", true, []int64{a.ID, a2.ID}},
		{"nobody", true, nil},
	} {
		got, err := db.List(ctx, "t", tc.to, tc.all)
		if err != nil {
			t.Fatal(err)
		}
		if !equalIDs(ids(got), tc.want) {
			t.Errorf("List(t, %q, all=%v) = %v, want %v", tc.to, tc.all, ids(got), tc.want)
		}
	}
	all, _ := db.List(ctx, "t", "a", true)
	if all[0].ReadAt.IsZero() || !all[1].ReadAt.IsZero() {
		t.Fatalf("List --all read marks wrong: %+v", all)
	}
}

func TestStale(t *testing.T) { eachBackend(t, testStale) }

func testStale(t *testing.T, be backend) {
	ctx := context.Background()
	db, c, _ := newDB(t, be)
	t0 := c.Now()
	read := send(t, db, "t", "s", "ghost", "read already")
	ghost := send(t, db, "t", "s", "ghost", "first line\nsecond")
	done := send(t, db, "t", "s", "done", "for the exited one")
	busy := send(t, db, "t", "s", "busy", "for the live one")
	send(t, db, "u", "s", "ghost", "other team")
	if got, err := db.Drain(ctx, "t", "ghost", 1, func([]mailbox.Message) error { return nil }); err != nil || len(got) != 1 || got[0].ID != read.ID {
		t.Fatalf("Drain limit 1 = %v, %v", got, err)
	}
	c.Add(5 * time.Minute)
	fresh := send(t, db, "t", "s", "ghost", "too new")
	now := c.Now()

	code := 3
	if err := db.RecordLaunch(ctx, mailbox.Agent{Team: "t", Name: "done", Type: "codex", Run: "r1", PID: 1234, State: mailbox.StateRunning}); err != nil {
		t.Fatal(err)
	}
	if err := db.SetAgentState(ctx, "t", "done", "r1", mailbox.StateExited, 0, &code); err != nil {
		t.Fatal(err)
	}
	if err := db.RecordLaunch(ctx, mailbox.Agent{Team: "t", Name: "busy", Type: "claude", Run: "r9", PID: os.Getpid(), State: mailbox.StateRunning}); err != nil {
		t.Fatal(err)
	}

	stale := func(to string, cutoff time.Time) []mailbox.StaleMessage {
		t.Helper()
		got, err := db.Stale(ctx, "t", to, cutoff)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	staleIDs := func(s []mailbox.StaleMessage) []int64 {
		var out []int64
		for _, m := range s {
			out = append(out, m.ID)
		}
		return out
	}
	for _, tc := range []struct {
		to     string
		cutoff time.Time
		want   []int64
	}{
		{"", now.Add(-3 * time.Minute), []int64{ghost.ID, done.ID, busy.ID}},
		{"", t0, []int64{ghost.ID, done.ID, busy.ID}}, // created_at == cut-off counts
		{"", t0.Add(-time.Nanosecond), nil},
		{"", now, []int64{ghost.ID, done.ID, busy.ID, fresh.ID}},
		{"ghost", now, []int64{ghost.ID, fresh.ID}},
		{"done", now, []int64{done.ID}},
		{"nobody", now, nil},
	} {
		if got := staleIDs(stale(tc.to, tc.cutoff)); !equalIDs(got, tc.want) {
			t.Errorf("Stale(to=%q, cutoff=%v) = %v, want %v", tc.to, tc.cutoff.Sub(t0), got, tc.want)
		}
	}

	got := stale("", t0)
	if got[0].Recipient != nil {
		t.Errorf("never-spawned recipient = %+v, want nil", got[0].Recipient)
	}
	if r := got[1].Recipient; r == nil || r.State != mailbox.StateExited || r.ExitCode == nil || *r.ExitCode != 3 || r.Run != "r1" || r.Type != "codex" {
		t.Errorf("exited recipient = %+v, want state exited code 3", r)
	}
	if r := got[2].Recipient; r == nil || r.PID != os.Getpid() || r.State != mailbox.StateRunning || r.ExitCode != nil {
		t.Errorf("running recipient = %+v, want pid %d running", r, os.Getpid())
	}
	// For one recipient, its record alone is read: the same answer.
	if got := stale("done", now); len(got) != 1 || got[0].Recipient == nil || got[0].Recipient.Run != "r1" {
		t.Errorf("Stale(to=done) recipient = %+v, want run r1", got)
	}
	if got := stale("ghost", now); len(got) != 2 || got[0].Recipient != nil {
		t.Errorf("Stale(to=ghost) recipient = %+v, want nil (never spawned)", got)
	}
	if m := got[0].Message; !m.CreatedAt.Equal(t0) || !m.ReadAt.IsZero() || m.Body != "first line" || m.To != "ghost" || m.From != "s" {
		t.Errorf("stale message fields = %+v", m)
	}

	// Reading them clears them; the other team's stale message stays.
	for _, who := range []string{"done", "busy", "ghost"} {
		if _, err := db.Drain(ctx, "t", who, 0, func([]mailbox.Message) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if got := stale("", now); len(got) != 0 {
		t.Fatalf("Stale after drain = %v; want none", staleIDs(got))
	}
	if got, _ := db.Stale(ctx, "u", "", now); len(got) != 1 {
		t.Fatalf("Stale(u) = %d, want 1", len(got))
	}
}

func TestReady(t *testing.T) { eachBackend(t, testReady) }

func testReady(t *testing.T, be backend) {
	ctx := context.Background()
	db, c, _ := newDB(t, be)
	if _, ok, err := db.Ready(ctx, "t", "a"); ok || err != nil {
		t.Fatalf("Ready before mark = %v, %v", ok, err)
	}
	if ok, err := db.ConsumeReady(ctx, "t", "a", "r1"); ok || err != nil {
		t.Fatalf("ConsumeReady without mark = %v, %v", ok, err)
	}
	if err := db.MarkReady(ctx, "t", "a", "r1"); err != nil {
		t.Fatal(err)
	}
	m, ok, err := db.Ready(ctx, "t", "a")
	if !ok || err != nil || m.Run != "r1" || !m.MarkedAt.Equal(c.Now()) || !m.ConsumedAt.IsZero() {
		t.Fatalf("Ready = %+v, %v, %v", m, ok, err)
	}
	if ok, _ := db.ConsumeReady(ctx, "t", "a", "r0"); ok {
		t.Fatal("ConsumeReady for another run = true, want false")
	}
	if ok, err := db.ConsumeReady(ctx, "t", "a", "r1"); !ok || err != nil {
		t.Fatalf("first ConsumeReady = %v, %v; want true", ok, err)
	}
	if ok, _ := db.ConsumeReady(ctx, "t", "a", "r1"); ok {
		t.Fatal("second ConsumeReady = true, want false")
	}
	if m, _, _ := db.Ready(ctx, "t", "a"); m.ConsumedAt.IsZero() {
		t.Fatal("consumed mark has no consumed_at")
	}
	// A new run's mark replaces the old one and is fresh again.
	c.Add(time.Minute)
	if err := db.MarkReady(ctx, "t", "a", "r2"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := db.ConsumeReady(ctx, "t", "a", "r1"); ok {
		t.Fatal("ConsumeReady for the old run after a new mark = true")
	}
	if ok, _ := db.ConsumeReady(ctx, "t", "a", "r2"); !ok {
		t.Fatal("ConsumeReady for the new run = false")
	}
	if err := db.ClearReady(ctx, "t", "a"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := db.Ready(ctx, "t", "a"); ok {
		t.Fatal("mark still there after ClearReady")
	}
}

func TestAgents(t *testing.T) { eachBackend(t, testAgents) }

func testAgents(t *testing.T, be backend) {
	ctx := context.Background()
	db, c, _ := newDB(t, be)
	if _, err := db.Agent(ctx, "t", "a"); !errors.Is(err, mailbox.ErrNotFound) {
		t.Fatalf("Agent before record: %v, want ErrNotFound", err)
	}
	a := mailbox.Agent{Team: "t", Name: "a", Type: "codex", Task: "do it", Issue: "o/r#1", Workdir: "/w", Run: "r1", PID: 10, State: mailbox.StateStarting, Log: "/l1"}
	if err := db.RecordLaunch(ctx, a); err != nil {
		t.Fatal(err)
	}
	got, err := db.Agent(ctx, "t", "a")
	if err != nil || got.Type != "codex" || got.Task != "do it" || got.Issue != "o/r#1" || got.Workdir != "/w" ||
		got.Run != "r1" || got.PID != 10 || got.State != mailbox.StateStarting || got.Log != "/l1" || got.ExitCode != nil || !stamped(t, db, c, got.CreatedAt) {
		t.Fatalf("Agent = %+v, %v", got, err)
	}
	t1 := got.CreatedAt
	code := 0
	c.Add(time.Second)
	if err := db.SetAgentState(ctx, "t", "a", "r1", mailbox.StateRunning, 42, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ = db.Agent(ctx, "t", "a"); got.PID != 42 || got.State != mailbox.StateRunning || got.ExitCode != nil {
		t.Fatalf("after SetAgentState running: %+v", got)
	}
	if err := db.SetAgentState(ctx, "t", "a", "r1", mailbox.StateExited, 0, &code); err != nil {
		t.Fatal(err)
	}
	if got, _ = db.Agent(ctx, "t", "a"); got.PID != 42 || got.State != mailbox.StateExited || got.ExitCode == nil || *got.ExitCode != 0 {
		t.Fatalf("after SetAgentState exited: %+v", got)
	}
	// A relaunch replaces the record and clears the exit code.
	c.Add(time.Second)
	a.Run, a.PID, a.State, a.Log = "r2", 20, mailbox.StateRunning, "/l2"
	if err := db.RecordLaunch(ctx, a); err != nil {
		t.Fatal(err)
	}
	got, _ = db.Agent(ctx, "t", "a")
	if got.Run != "r2" || got.PID != 20 || got.ExitCode != nil || got.Log != "/l2" || !got.CreatedAt.Equal(t1) || !stamped(t, db, c, got.UpdatedAt) {
		t.Fatalf("after relaunch: %+v", got)
	}
	// A late write for the older run is ignored.
	code = 9
	if err := db.SetAgentState(ctx, "t", "a", "r1", mailbox.StateExited, 99, &code); err != nil {
		t.Fatal(err)
	}
	if got, _ = db.Agent(ctx, "t", "a"); got.Run != "r2" || got.State != mailbox.StateRunning || got.PID != 20 || got.ExitCode != nil {
		t.Fatalf("SetAgentState for an older run changed the record: %+v", got)
	}
	if err := db.RecordLaunch(ctx, mailbox.Agent{Team: "t", Name: "b", Type: "x", Run: "q", State: mailbox.StateRunning}); err != nil {
		t.Fatal(err)
	}
	if err := db.RecordLaunch(ctx, mailbox.Agent{Team: "u", Name: "c", Type: "x", Run: "q", State: mailbox.StateRunning}); err != nil {
		t.Fatal(err)
	}
	all, err := db.Agents(ctx, "t")
	if err != nil || len(all) != 2 || all[0].Name != "a" || all[1].Name != "b" || all[0].Task != "do it" {
		t.Fatalf("Agents(t) = %+v, %v", all, err)
	}
	// The same records without their tasks, nothing else missing.
	brief, err := db.AgentsWithoutTasks(ctx, "t")
	if err != nil || len(brief) != 2 {
		t.Fatalf("AgentsWithoutTasks(t) = %+v, %v", brief, err)
	}
	for i := range all {
		want := all[i]
		want.Task = ""
		if !reflect.DeepEqual(brief[i], want) {
			t.Fatalf("AgentsWithoutTasks(t)[%d] = %+v, want %+v without its task", i, brief[i], all[i])
		}
	}
	if teams, err := db.Teams(ctx, 10); err != nil || !slices.Equal(teams, []string{"t", "u"}) {
		t.Fatalf("Teams = %q, %v", teams, err)
	}
}

// Recipients are the names a team's mail went to, each once, in order, up
// to the limit: spawned or not. Teams are those of the agents and of the
// mail.
func TestRecipients(t *testing.T) { eachBackend(t, testRecipients) }

func testRecipients(t *testing.T, be backend) {
	ctx := context.Background()
	db, _, _ := newDB(t, be)
	for _, m := range []mailbox.Message{{Team: "t", To: "lead"}, {Team: "t", To: "b"}, {Team: "t", To: "lead"},
		{Team: "t", To: "c"}, {Team: "u", To: "a"}, {Team: "t", To: "b"}} {
		m.From, m.Body = "x", "hi"
		if _, err := db.Send(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	for limit, want := range map[int][]string{10: {"b", "c", "lead"}, 2: {"b", "c"}} {
		if got, err := db.Recipients(ctx, "t", limit); err != nil || !slices.Equal(got, want) {
			t.Errorf("Recipients(t, %d) = %q, %v; want %q", limit, got, err, want)
		}
	}
	if got, err := db.Recipients(ctx, "none", 10); err != nil || len(got) != 0 {
		t.Errorf("Recipients(none) = %q, %v", got, err)
	}
	if err := db.RecordLaunch(ctx, mailbox.Agent{Team: "s", Name: "a", Type: "x", Run: "q", State: mailbox.StateRunning}); err != nil {
		t.Fatal(err)
	}
	for limit, want := range map[int][]string{10: {"s", "t", "u"}, 2: {"s", "t"}} {
		if got, err := db.Teams(ctx, limit); err != nil || !slices.Equal(got, want) {
			t.Errorf("Teams(%d) = %q, %v; want %q", limit, got, err, want)
		}
	}
}

func TestAsks(t *testing.T) { eachBackend(t, testAsks) }

func testAsks(t *testing.T, be backend) {
	ctx := context.Background()
	db, c, _ := newDB(t, be)
	q := mailbox.Ask{Team: "t", Agent: "a", Run: "r1", Issue: "o/r#2", Kind: mailbox.KindQuestion, Question: "which?"}
	first, created, err := db.CreateAsk(ctx, q)
	if err != nil || !created || first.ID == 0 || first.State != mailbox.AskAwaiting || !first.CreatedAt.Equal(c.Now()) {
		t.Fatalf("CreateAsk = %+v, %v, %v", first, created, err)
	}
	q.Question = "asked again"
	again, created, err := db.CreateAsk(ctx, q)
	if err != nil || created || again.ID != first.ID || again.Question != "which?" {
		t.Fatalf("CreateAsk for the same run = %+v, created=%v, %v; want the first ask", again, created, err)
	}
	q.Run = "r2"
	other, created, err := db.CreateAsk(ctx, q)
	if err != nil || !created || other.ID == first.ID {
		t.Fatalf("CreateAsk for another run = %+v, %v, %v", other, created, err)
	}
	// Asks without a run are never merged.
	n1, c1, _ := db.CreateAsk(ctx, mailbox.Ask{Team: "t", Agent: "h", Kind: mailbox.KindApproval, Question: "ok?"})
	n2, c2, _ := db.CreateAsk(ctx, mailbox.Ask{Team: "t", Agent: "h", Kind: mailbox.KindApproval, Question: "ok?"})
	if !c1 || !c2 || n1.ID == n2.ID {
		t.Fatalf("run-less asks merged: %d %d", n1.ID, n2.ID)
	}

	if err := db.SetAskPosted(ctx, first.ID, 77, "https://x/c/77"); err != nil {
		t.Fatal(err)
	}
	c.Add(time.Minute)
	ok, err := db.DecideAsk(ctx, first.ID, mailbox.Decision{Answer: "the red one", DecidedBy: "alice", Decision: mailbox.DecisionAnswered, Source: "https://x/c/78"})
	if !ok || err != nil {
		t.Fatalf("first DecideAsk = %v, %v", ok, err)
	}
	ok, err = db.DecideAsk(ctx, first.ID, mailbox.Decision{Answer: "blue", DecidedBy: "mallory", Decision: mailbox.DecisionAnswered})
	if ok || err != nil {
		t.Fatalf("second DecideAsk = %v, %v; want false", ok, err)
	}
	got, err := db.Ask(ctx, first.ID)
	if err != nil || got.State != mailbox.AskAnswered || got.Answer != "the red one" || got.DecidedBy != "alice" ||
		got.CommentID != 77 || !got.AnsweredAt.Equal(c.Now()) || got.Source != "https://x/c/78" {
		t.Fatalf("decided ask = %+v, %v", got, err)
	}
	awaiting, _ := db.Asks(ctx, "t", mailbox.AskAwaiting)
	if len(awaiting) != 3 {
		t.Fatalf("awaiting asks = %d, want 3", len(awaiting))
	}

	// The delivery: only the launch the ask waits for starts; once
	// started it is never launched again.
	if ok, err := db.LaunchAnswer(ctx, first.ID, "r3"); !ok || err != nil {
		t.Fatalf("LaunchAnswer r3 = %v, %v", ok, err)
	}
	if ok, err := db.LaunchAnswer(ctx, first.ID, "r4"); !ok || err != nil { // replaces r3
		t.Fatalf("LaunchAnswer r4 = %v, %v", ok, err)
	}
	if err := db.StartRun(ctx, "t", "w", "r3", mailbox.Process{PID: 1}, first.ID); !errors.Is(err, mailbox.ErrWithdrawn) {
		t.Fatalf("StartRun of the replaced launch = %v; want ErrWithdrawn", err)
	}
	if ok, err := db.WithdrawLaunch(ctx, first.ID); !ok || err != nil {
		t.Fatalf("WithdrawLaunch = %v, %v", ok, err)
	}
	if err := db.StartRun(ctx, "t", "w", "r4", mailbox.Process{PID: 1}, first.ID); !errors.Is(err, mailbox.ErrWithdrawn) {
		t.Fatalf("StartRun of a withdrawn launch = %v; want ErrWithdrawn", err)
	}
	if ok, _ := db.LaunchAnswer(ctx, first.ID, "r5"); !ok {
		t.Fatal("LaunchAnswer r5 = false")
	}
	if err := db.RecordLaunch(ctx, mailbox.Agent{Team: "t", Name: "w", Type: "x", Run: "r5", State: mailbox.StateStarting}); err != nil {
		t.Fatal(err)
	}
	if err := db.StartRun(ctx, "t", "w", "r5", mailbox.Process{PID: 1}, first.ID); err != nil {
		t.Fatalf("StartRun r5 = %v", err)
	}
	if ok, _ := db.LaunchAnswer(ctx, first.ID, "r6"); ok {
		t.Fatal("LaunchAnswer after the start = true")
	}
	if ok, err := db.WithdrawLaunch(ctx, first.ID); ok || err != nil {
		t.Fatalf("WithdrawLaunch after the start = %v, %v", ok, err)
	}
	got, _ = db.Ask(ctx, first.ID)
	if got.State != mailbox.AskAnswered || got.ResumedRun != "r5" || got.LaunchRun != "" || got.Answer != "the red one" {
		t.Fatalf("delivered ask = %+v", got)
	}
	// A run whose agent never started gives the answer back.
	if err := db.UnstartRun(ctx, first.ID, "r5"); err != nil {
		t.Fatal(err)
	}
	if got, _ = db.Ask(ctx, first.ID); got.ResumedRun != "" || got.LaunchRun != "r5" {
		t.Fatalf("ask after UnstartRun = %+v", got)
	}
	if err := db.SetAskPostError(ctx, other.ID, "502 from GitHub"); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.Ask(ctx, other.ID); got.PostError != "502 from GitHub" {
		t.Fatalf("post error = %q", got.PostError)
	}
	if _, err := db.Ask(ctx, 999); !errors.Is(err, mailbox.ErrNotFound) {
		t.Fatalf("Ask(999) err = %v", err)
	}
	all, _ := db.Asks(ctx, "t", "")
	if len(all) != 4 || all[0].ID != first.ID {
		t.Fatalf("Asks(all) = %d", len(all))
	}
}

func TestDecideAskConcurrent(t *testing.T) { eachBackend(t, testDecideAskConcurrent) }

func testDecideAskConcurrent(t *testing.T, be backend) {
	ctx := context.Background()
	db, _, path := newDB(t, be)
	a, _, err := db.CreateAsk(ctx, mailbox.Ask{Team: "t", Agent: "a", Run: "r", Kind: mailbox.KindQuestion, Question: "?"})
	if err != nil {
		t.Fatal(err)
	}
	db2 := open(t, path, nil)
	var wins int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, d := range []*mailbox.DB{db, db2, db, db2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := d.DecideAsk(ctx, a.ID, mailbox.Decision{Answer: string(rune('a' + i)), Decision: mailbox.DecisionAnswered})
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d DecideAsk calls won, want exactly 1", wins)
	}
}

func TestResumeIntents(t *testing.T) { eachBackend(t, testResumeIntents) }

func testResumeIntents(t *testing.T, be backend) {
	ctx := context.Background()
	db, _, _ := newDB(t, be)
	a1, _, _ := db.CreateAsk(ctx, mailbox.Ask{Team: "t", Agent: "a", Run: "1", Kind: mailbox.KindQuestion, Question: "?"})
	a2, _, _ := db.CreateAsk(ctx, mailbox.Ask{Team: "t", Agent: "b", Run: "1", Kind: mailbox.KindQuestion, Question: "?"})
	u, _, _ := db.CreateAsk(ctx, mailbox.Ask{Team: "u", Agent: "a", Run: "1", Kind: mailbox.KindQuestion, Question: "?"})
	for _, id := range []int64{a2.ID, a1.ID, a1.ID, u.ID} { // a1 twice: insert if absent
		if err := db.AddAnswerIntent(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	got, err := db.ResumeIntents(ctx, "t")
	if err != nil || len(got) != 2 || got[0].AskID != a1.ID || got[1].AskID != a2.ID || got[0].CreatedAt.IsZero() {
		t.Fatalf("ResumeIntents = %+v, %v", got, err)
	}
	if err := db.ClearResumeIntent(ctx, a1.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.ResumeIntents(ctx, "t"); len(got) != 1 || got[0].AskID != a2.ID {
		t.Fatalf("after clear: %+v", got)
	}
	if got, _ := db.ResumeIntents(ctx, "u"); len(got) != 1 {
		t.Fatalf("team u intents: %+v", got)
	}
	// A claim's intent is written only while its ask awaits.
	v, _, _ := db.CreateAsk(ctx, mailbox.Ask{Team: "v", Agent: "a", Run: "1", Kind: mailbox.KindQuestion, Question: "?"})
	w, _, _ := db.CreateAsk(ctx, mailbox.Ask{Team: "v", Agent: "b", Run: "1", Kind: mailbox.KindQuestion, Question: "?"})
	if won, err := db.DecideAsk(ctx, w.ID, mailbox.Decision{Answer: "yes", DecidedBy: "carol", Decision: mailbox.DecisionAnswered, Source: "local"}); !won || err != nil {
		t.Fatalf("DecideAsk = %v, %v", won, err)
	}
	for _, id := range []int64{v.ID, v.ID, w.ID} {
		if err := db.AddAnswerIntent(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := db.ResumeIntents(ctx, "v"); err != nil || len(got) != 1 || got[0].AskID != v.ID {
		t.Fatalf("claim intents of team v = %+v, %v; want the awaiting ask's alone", got, err)
	}
	// A delivery's intent is written only while its answer waits to be
	// delivered: answered, not resumed.
	if err := db.ClearResumeIntent(ctx, v.ID); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{v.ID, w.ID} {
		if err := db.AddDeliveryIntent(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := db.ResumeIntents(ctx, "v"); err != nil || len(got) != 1 || got[0].AskID != w.ID {
		t.Fatalf("delivery intents of team v = %+v, %v; want the answered ask's alone", got, err)
	}
}

func TestETagsAndSettings(t *testing.T) { eachBackend(t, testETagsAndSettings) }

func testETagsAndSettings(t *testing.T, be backend) {
	ctx := context.Background()
	db, _, _ := newDB(t, be)
	if tag, err := db.ETag(ctx, "https://api/x"); tag != "" || err != nil {
		t.Fatalf("ETag unset = %q, %v", tag, err)
	}
	for _, tag := range []string{`W/"1"`, `W/"2"`} {
		if err := db.SetETag(ctx, "https://api/x", tag); err != nil {
			t.Fatal(err)
		}
		if got, _ := db.ETag(ctx, "https://api/x"); got != tag {
			t.Fatalf("ETag = %q, want %q", got, tag)
		}
	}
	if v, ok, err := db.Setting(ctx, "t", "paused"); ok || v != "" || err != nil {
		t.Fatalf("unset setting = %q, %v, %v", v, ok, err)
	}
	db.SetSetting(ctx, "t", "paused", "1")
	db.SetSetting(ctx, "t", "paused", "yes")
	if v, ok, _ := db.Setting(ctx, "t", "paused"); !ok || v != "yes" {
		t.Fatalf("setting = %q, %v", v, ok)
	}
	if _, ok, _ := db.Setting(ctx, "u", "paused"); ok {
		t.Fatal("setting leaked to another team")
	}
	if err := db.SetSetting(ctx, "t", "paused", ""); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := db.Setting(ctx, "t", "paused"); ok {
		t.Fatal("empty value did not remove the setting")
	}
}

func tables(t *testing.T, path string) []string {
	t.Helper()
	rows, err := raw(t, path).Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		out = append(out, n)
	}
	return out
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	// A real SQLite file at user_version 0 with no tables.
	r, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Exec(`PRAGMA journal_mode = WAL; CREATE TABLE x (a); DROP TABLE x`); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if got := tables(t, path); len(got) != 0 {
		t.Fatalf("setup left tables %v", got)
	}

	db, err := mailbox.Open(ctx, path, mailbox.Options{})
	if err != nil {
		t.Fatalf("Open of a version-0 database: %v", err)
	}
	v, err := db.SchemaVersion(ctx)
	if err != nil || v < 1 {
		t.Fatalf("SchemaVersion = %d, %v; want >= 1", v, err)
	}
	m := send(t, db, "t", "s", "w", "survives")
	db.Close()
	want := []string{"agents", "asks", "etags", "messages", "queue", "ready", "resume_intents", "runs", "settings", "slack_events"}
	if got := tables(t, path); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("tables after migration = %v, want %v", got, want)
	}

	// Reopening is a no-op: same version, same data, file bytes unchanged.
	before := readFile(t, path)
	db, err = mailbox.Open(ctx, path, mailbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v2, _ := db.SchemaVersion(ctx)
	got, err := db.Message(ctx, m.ID)
	db.Close()
	if v2 != v || err != nil || got.Body != "survives" {
		t.Fatalf("reopen: version %d (want %d), message %+v, %v", v2, v, got, err)
	}
	if !bytes.Equal(before, readFile(t, path)) {
		t.Fatal("reopening a current database changed the file")
	}
}

// A version-1 mailbox (before messages kept a preview) with unread messages
// is migrated in place: stale then lists their first lines from its index.
func TestMigrationFromVersion1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	ddl, err := os.ReadFile("migrations/001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	r := raw(t, path)
	if _, err := r.Exec(`PRAGMA journal_mode = WAL; ` + string(ddl) + `; PRAGMA user_version = 1`); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	old := t0.Add(-time.Hour).UnixNano()
	for _, body := range []string{"deploy the fix\nthen report", "a single line", "crlf line\r\nsecond", "cr only\rhidden\nthird", strings.Repeat("é", 300), "read already"} {
		if _, err := r.Exec(`INSERT INTO messages (team, sender, recipient, body, created_at) VALUES ('t', 'lead', 'w1', ?, ?)`, body, old); err != nil {
			t.Fatal(err)
		}
	}
	r.Exec(`UPDATE messages SET read_at = 1 WHERE body = 'read already'`)
	r.Close()

	db, err := mailbox.Open(ctx, path, mailbox.Options{})
	if err != nil {
		t.Fatalf("Open of a version-1 mailbox: %v", err)
	}
	defer db.Close()
	if v, err := db.SchemaVersion(ctx); err != nil || v < 2 {
		t.Fatalf("SchemaVersion = %d, %v; want 2 or later", v, err)
	}
	got, err := db.Stale(ctx, "t", "", t0)
	var previews []string
	for _, m := range got {
		previews = append(previews, m.Body)
	}
	// The backfill cuts the first line as Preview does, for every line ending.
	want := []string{"deploy the fix", "a single line", "crlf line", "cr only", strings.Repeat("é", mailbox.PreviewLen)}
	if err != nil || strings.Join(previews, "|") != strings.Join(want, "|") {
		t.Fatalf("stale after migration = %q, %v; want %q", previews, err, want)
	}
	for _, w := range want {
		if mailbox.Preview(w) != w {
			t.Errorf("Preview(%q) disagrees with the migration", w)
		}
	}
	// New messages get their preview when sent; the body stays whole.
	m := send(t, db, "t", "lead", "w1", strings.Repeat("é", 300)+"\nmore")
	if got, _ := db.Stale(ctx, "t", "", t0.Add(time.Hour)); got[len(got)-1].Body != strings.Repeat("é", mailbox.PreviewLen) {
		t.Fatalf("preview of a long first line = %q", got[len(got)-1].Body)
	}
	if full, _ := db.Message(ctx, m.ID); !strings.HasSuffix(full.Body, "\nmore") {
		t.Fatal("the body was cut along with its preview")
	}
}

func TestMigrationRefusesNewer(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "new.db")
	r, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Exec(`PRAGMA journal_mode = WAL; CREATE TABLE future (a); INSERT INTO future VALUES (1); PRAGMA user_version = 99`); err != nil {
		t.Fatal(err)
	}
	r.Close()
	before := readFile(t, path)
	_, err = mailbox.Open(ctx, path, mailbox.Options{})
	if !errors.Is(err, mailbox.ErrTooNew) {
		t.Fatalf("Open of a user_version 99 database: %v, want ErrTooNew", err)
	}
	if !bytes.Equal(before, readFile(t, path)) {
		t.Fatal("refused database was modified")
	}
	if got := tables(t, path); strings.Join(got, ",") != "future" {
		t.Fatalf("tables after refusal = %v, want only future", got)
	}
	if n := count(t, raw(t, path), `PRAGMA user_version`); n != 99 {
		t.Fatalf("user_version after refusal = %d", n)
	}
}

func TestCorruptFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "junk.db")
	junk := make([]byte, 8192)
	rand.Read(junk)
	if err := os.WriteFile(path, junk, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := mailbox.Open(context.Background(), path, mailbox.Options{})
	if err == nil {
		db.Close()
	}
	if !errors.Is(err, mailbox.ErrCorrupt) {
		t.Fatalf("Open of random bytes: %v, want ErrCorrupt", err)
	}
	var me *mailbox.Error
	if !errors.As(err, &me) || me.Hint() == "" {
		t.Fatalf("corrupt error %v carries no hint", err)
	}
	if !bytes.Equal(junk, readFile(t, path)) {
		t.Fatal("corrupt file was modified")
	}
}

// Another program's SQLite file is refused and left as it was: teamkit's
// tables are never added beside someone else's.
func TestForeignSQLiteFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.db")
	// As the other program made it: a rollback journal, not WAL.
	app, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.Exec(`CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT)`); err != nil {
		t.Fatal(err)
	}
	app.Close()
	before := readFile(t, path)
	db, err := mailbox.Open(context.Background(), path, mailbox.Options{})
	if err == nil {
		db.Close()
	}
	if !errors.Is(err, mailbox.ErrCorrupt) || !strings.Contains(err.Error(), "another program's tables: orders") {
		t.Fatalf("Open of another program's database: %v, want ErrCorrupt naming its tables", err)
	}
	if !bytes.Equal(before, readFile(t, path)) {
		t.Fatal("the refused file was modified (its journal mode switched to WAL?)")
	}
}

func TestMissingDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "no", "such")
	_, err := mailbox.Open(context.Background(), filepath.Join(dir, "t.db"), mailbox.Options{})
	if !errors.Is(err, mailbox.ErrNoDir) {
		t.Fatalf("Open in a missing dir: %v, want ErrNoDir", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing directory was created: %v", err)
	}
	db, err := mailbox.Open(context.Background(), filepath.Join(dir, "t.db"), mailbox.Options{CreateDir: true})
	if err != nil {
		t.Fatalf("Open with CreateDir: %v", err)
	}
	db.Close()
}

// holdLock takes the write lock on path from another connection, as another
// process in the middle of a drain would, until the test ends or release.
func holdLock(t *testing.T, path string) (release func()) {
	t.Helper()
	r, err := sql.Open("sqlite", "file:"+path+"?_journal_mode=WAL")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := r.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			conn.ExecContext(context.Background(), "ROLLBACK")
			conn.Close()
			r.Close()
		})
	}
	t.Cleanup(release)
	return release
}

func TestLocked(t *testing.T) {
	ctx := context.Background()
	t.Run("send", func(t *testing.T) {
		first, _, path := newDB(t, sqliteBackend)
		send(t, first, "t", "s", "w", "queued before the lock")
		release := holdLock(t, path)
		db, err := mailbox.Open(ctx, path, mailbox.Options{BusyTimeout: 200 * time.Millisecond})
		if err != nil {
			t.Fatalf("Open of a migrated, locked database: %v", err)
		}
		defer db.Close()
		_, err = db.Send(ctx, mailbox.Message{Team: "t", From: "s", To: "w", Body: "blocked"})
		if !errors.Is(err, mailbox.ErrLocked) {
			t.Fatalf("Send while locked: %v, want ErrLocked", err)
		}
		_, err = db.Drain(ctx, "t", "w", 0, func([]mailbox.Message) error { return nil })
		if !errors.Is(err, mailbox.ErrLocked) {
			t.Fatalf("Drain while locked: %v, want ErrLocked", err)
		}
		// An empty inbox needs no write lock to say so.
		if msgs, err := db.Drain(ctx, "t", "nobody", 0, func([]mailbox.Message) error { return nil }); err != nil || len(msgs) != 0 {
			t.Fatalf("Drain of an empty inbox while locked: %v, %v; want none, no error", msgs, err)
		}
		release()
		if n := count(t, raw(t, path), `SELECT count(*) FROM messages WHERE read_at IS NULL AND claim_token IS NULL`); n != 1 {
			t.Fatalf("%d unread unclaimed messages after the lock, want the 1 queued before it (none written, none claimed)", n)
		}
		if n := count(t, raw(t, path), `SELECT count(*) FROM messages`); n != 1 {
			t.Fatalf("%d messages after the lock, want the 1 queued before it", n)
		}
	})
	t.Run("migrate", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "fresh.db")
		release := holdLock(t, path)
		_, err := mailbox.Open(ctx, path, mailbox.Options{BusyTimeout: 200 * time.Millisecond})
		if !errors.Is(err, mailbox.ErrLocked) {
			t.Fatalf("Open (migration) while locked: %v, want ErrLocked", err)
		}
		release()
		if got := tables(t, path); len(got) != 0 {
			t.Fatalf("tables created while locked: %v", got)
		}
	})
}

func TestBodyChecks(t *testing.T) { eachBackend(t, testBodyChecks) }

func testBodyChecks(t *testing.T, be backend) {
	ctx := context.Background()
	db, _, path := newDB(t, be)
	for _, tc := range []struct {
		name string
		body string
		want error
	}{
		{"empty", "", mailbox.ErrEmptyBody},
		{"too big", strings.Repeat("x", mailbox.MaxBody+1), mailbox.ErrBodyTooBig},
		{"invalid utf-8", "ok \xff\xfe", mailbox.ErrBodyNotUTF8},
		{"nul", "a\x00b", mailbox.ErrBodyNUL},
	} {
		if err := mailbox.CheckBody(tc.body); !errors.Is(err, tc.want) {
			t.Errorf("CheckBody(%s) = %v, want %v", tc.name, err, tc.want)
		}
		if _, err := db.Send(ctx, mailbox.Message{Team: "t", From: "s", To: "w", Body: tc.body}); !errors.Is(err, tc.want) {
			t.Errorf("Send(%s) = %v, want %v", tc.name, err, tc.want)
		}
	}
	if err := mailbox.CheckBody(strings.Repeat("x", mailbox.MaxBody)); err != nil {
		t.Errorf("CheckBody(exactly MaxBody) = %v", err)
	}
	if n := count(t, raw(t, path), `SELECT count(*) FROM messages`); n != 0 {
		t.Fatalf("%d refused bodies were stored", n)
	}
}

func TestLargeBodyRoundTrip(t *testing.T) { eachBackend(t, testLargeBodyRoundTrip) }

func testLargeBodyRoundTrip(t *testing.T, be backend) {
	ctx := context.Background()
	db, _, _ := newDB(t, be)
	// 1 MiB of varied valid UTF-8: ASCII, multi-byte runes, newlines, CR, tabs.
	var b strings.Builder
	pieces := []string{"line\n", "é", "日本語", "\r\n", "\t", "🙂", "<&>\"'\\", " "}
	for i := 0; b.Len() < 1<<20; i++ {
		b.WriteString(pieces[i%len(pieces)])
	}
	body := b.String()
	m := send(t, db, "t", "s", "w", body)
	var got []mailbox.Message
	if _, err := db.Drain(ctx, "t", "w", 0, keep(&got)); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != m.ID || got[0].Body != body {
		t.Fatalf("1 MiB body did not round-trip byte-exact (got %d messages)", len(got))
	}
}

func TestMessageJSON(t *testing.T) { eachBackend(t, testMessageJSON) }

func testMessageJSON(t *testing.T, be backend) {
	db, _, _ := newDB(t, be)
	m := send(t, db, "t", "s", "w", "<b>&")
	j, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	s := string(j)
	for _, want := range []string{`"reply_to":null`, `"read_at":null`, `"body":"<b>&"`, `"created_at":"2025-03-01T12:00:00Z"`} {
		if !strings.Contains(s, want) {
			t.Errorf("JSON %s lacks %s", s, want)
		}
	}
}

func TestWatch(t *testing.T) { eachBackend(t, testWatch) }

// A change wakes the waiter: with the safety poll switched off, the only
// way Watch can see a message sent after its first check (which found
// nothing) is being woken by the send. Watch runs in its own goroutine and
// reports back; only the test's goroutine fails the test.
func testWatch(t *testing.T, be backend) {
	mailbox.NoSafetyPolls(t)
	ctx := context.Background()
	db, _, path := newDB(t, be)
	wokenBySend(t, db, open(t, path, nil))
	ok, err := db.Watch(ctx, "t", time.Now().Add(20*time.Millisecond), func() (bool, error) { return false, nil })
	if ok || err != nil {
		t.Fatalf("Watch past its deadline = %v, %v; want false, nil", ok, err)
	}
}

// wokenBySend fails t unless a Watch on db for a message to t/w, which
// finds none at first, is woken by other's send of one (with the safety
// polls off: NoSafetyPolls): within a minute, where the Watch's own
// deadline, after which it would look once more, is an hour away.
func wokenBySend(t *testing.T, db, other *mailbox.DB) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		ok     bool
		err    error
		checks int
	}
	waiting := make(chan struct{})
	done := make(chan result, 1)
	go func() {
		checks := 0
		ok, err := db.Watch(ctx, "t", time.Now().Add(time.Hour), func() (bool, error) {
			checks++
			p, err := db.Peek(ctx, "t", "w", 0)
			if checks == 1 {
				close(waiting)
			}
			return len(p) > 0, err
		})
		done <- result{ok, err, checks}
	}()
	<-waiting
	send(t, other, "t", "s", "w", "wake")
	select {
	case r := <-done:
		if !r.ok || r.err != nil || r.checks < 2 {
			t.Fatalf("Watch = %v, %v after %d checks; want true, woken by the send", r.ok, r.err, r.checks)
		}
	case <-time.After(time.Minute):
		t.Fatal("the send did not wake the Watch within a minute")
	}
}

// A mailbox opened through a link (in another directory), or through a
// ".." after a linked directory, is the file SQLite opens, whose WAL it
// names after that file: a waiter there is woken by a send through the
// file's own name, and the two names share their locks.
func TestLinkedMailbox(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("SQLite on Windows names the WAL after the link itself (README: Mailbox)")
	}
	dotdot := func(t *testing.T) (string, string) {
		root := t.TempDir()
		deep := filepath.Join(root, "x", "deep")
		if err := os.MkdirAll(filepath.Join(deep, "sub"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(root, "a"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(deep, "sub"), filepath.Join(root, "a", "dirlink")); err != nil {
			t.Fatal(err)
		}
		// The kernel takes dirlink/.. to x/deep; the text alone says a.
		return filepath.Join(deep, "m.db"), root + "/a/dirlink/../m.db"
	}
	for _, tc := range []struct {
		name string
		// names returns the file's own name and another name for it.
		names func(t *testing.T) (string, string)
		// otherFirst creates the mailbox through the other name.
		otherFirst bool
	}{
		{"link", func(t *testing.T) (string, string) {
			path := filepath.Join(t.TempDir(), "real.db")
			link := filepath.Join(t.TempDir(), "link.db")
			if err := os.Symlink(path, link); err != nil {
				t.Fatal(err)
			}
			return path, link
		}, false},
		{"dotdot", dotdot, false},
		// A mailbox created through the dots is where its second open
		// finds it, and both opens lock and watch the same files.
		{"dotdot_new", dotdot, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mailbox.NoSafetyPolls(t)
			path, other := tc.names(t)
			var real, linked *mailbox.DB
			if tc.otherFirst {
				linked = open(t, other, nil)
				real = open(t, path, nil)
			} else {
				real = open(t, path, nil)
				linked = open(t, other, nil)
			}
			held, err := real.Lock("t", "w.spawn")
			if err != nil {
				t.Fatal(err)
			}
			if ok, err := held.TryLock(); !ok || err != nil {
				t.Fatalf("TryLock = %v, %v", ok, err)
			}
			defer held.Unlock()
			second, err := linked.Lock("t", "w.spawn")
			if err != nil {
				t.Fatal(err)
			}
			if ok, err := second.TryLock(); ok || err != nil {
				t.Fatalf("TryLock through %s while held through the file = %v, %v; want false", other, ok, err)
			}
			wokenBySend(t, linked, real)
		})
	}
}

// Version 3 adds a run's host, exact identity and heartbeat: an agent
// recorded before it (SQLite, the only backend older than version 3) reads
// back with none of them.
func TestAgentFromVersion2(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v2.db")
	r := raw(t, path)
	for _, f := range []string{"migrations/001_init.sql", "migrations/002_stale_preview.sql"} {
		ddl, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Exec(string(ddl)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.Exec(`PRAGMA user_version = 2; INSERT INTO agents (team, name, type, run, pid, state, created_at, updated_at) VALUES ('t', 'old', 'x', 'r0', 77, 'running', 1, 1)`); err != nil {
		t.Fatal(err)
	}
	r.Close()
	db := open(t, path, nil)
	old, err := db.Agent(ctx, "t", "old")
	if err != nil || old.PID != 77 || old.Host != "" || old.PIDStart != 0 || old.BootID != "" || old.HeartbeatAt != nil {
		t.Fatalf("agent recorded before version 3 = %+v, %v", old, err)
	}
}

// A supervisor's record and heartbeat land on its own run only, and never
// after the run has ended.
func TestAgentIdentityAndHeartbeat(t *testing.T) { eachBackend(t, testAgentIdentityAndHeartbeat) }

func testAgentIdentityAndHeartbeat(t *testing.T, be backend) {
	ctx := context.Background()
	db, c, _ := newDB(t, be)
	if err := db.RecordLaunch(ctx, mailbox.Agent{Team: "t", Name: "a", Type: "x", Run: "r1", State: mailbox.StateStarting, Host: "hostA"}); err != nil {
		t.Fatal(err)
	}
	p := mailbox.Process{PID: 42, Start: 9000, Boot: "b-1", Host: "hostA", Heartbeat: 2 * time.Second}
	// A run that is not the agent's (a launch that replaced it was
	// recorded meanwhile) is refused: its supervisor must start nothing.
	if err := db.StartRun(ctx, "t", "a", "other-run", p, 0); !errors.Is(err, mailbox.ErrSuperseded) {
		t.Fatalf("StartRun of another run: %v, want ErrSuperseded", err)
	}
	if a, _ := db.Agent(ctx, "t", "a"); a.PID != 0 || a.State != mailbox.StateStarting {
		t.Fatalf("another run's supervisor changed the record: %+v", a)
	}
	if err := db.StartRun(ctx, "t", "a", "r1", p, 0); err != nil {
		t.Fatal(err)
	}
	// A run's activity starts with the run.
	if a, _ := db.Agent(ctx, "t", "a"); a.LastActiveAt == nil || !stamped(t, db, c, *a.LastActiveAt) {
		t.Fatalf("after StartRun: last active %v, want now", a.LastActiveAt)
	}
	c.Add(time.Minute)
	if err := db.Heartbeat(ctx, "t", "a", "r1", 20*time.Second); err != nil {
		t.Fatal(err)
	}
	a, err := db.Agent(ctx, "t", "a")
	if err != nil || a.PID != 42 || a.PIDStart != 9000 || a.BootID != "b-1" || a.Host != "hostA" || a.Heartbeat != 2*time.Second ||
		a.HeartbeatAt == nil || !stamped(t, db, c, *a.HeartbeatAt) || a.State != mailbox.StateRunning {
		t.Fatalf("after SetAgentRunning and Heartbeat: %+v, %v", a, err)
	}
	// The heartbeat carries the agent's silence: its last event was 20 s
	// before the beat, by the database's clock (which PostgreSQL reads
	// once for each of the two).
	if a.LastActiveAt == nil || (a.HeartbeatAt.Sub(*a.LastActiveAt)-20*time.Second).Abs() > time.Second {
		t.Fatalf("last active %v with heartbeat %v, want 20s before it", a.LastActiveAt, a.HeartbeatAt)
	}
	js, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{`"pid":42`, `"host":"hostA"`, `"pid_start":9000`, `"boot_id":"b-1"`, `"heartbeat_at":"` + a.HeartbeatAt.Format(time.RFC3339Nano) + `"`, `"heartbeat_interval_seconds":2`, `"exit_code":null`,
		`"last_active_at":"` + a.LastActiveAt.Format(time.RFC3339Nano) + `"`} {
		if !strings.Contains(string(js), f) {
			t.Errorf("agent JSON %s lacks %s", js, f)
		}
	}
	// A relaunch starts with no heartbeat; the spawner's record of the
	// supervisor does not overwrite the supervisor's own.
	if err := db.RecordLaunch(ctx, mailbox.Agent{Team: "t", Name: "a", Type: "x", Run: "r2", State: mailbox.StateStarting, Host: "hostB"}); err != nil {
		t.Fatal(err)
	}
	if a, _ := db.Agent(ctx, "t", "a"); a.HeartbeatAt != nil || a.LastActiveAt != nil || a.Host != "hostB" || a.PIDStart != 0 {
		t.Fatalf("relaunch kept the old run's identity: %+v", a)
	}
	db.StartRun(ctx, "t", "a", "r2", mailbox.Process{PID: 7, Start: 1, Boot: "b-2", Host: "hostB"}, 0)
	db.SetAgentPID(ctx, "t", "a", "r2", mailbox.Process{PID: 8, Start: 2, Boot: "b-2", Host: "hostB"})
	if a, _ := db.Agent(ctx, "t", "a"); a.PID != 7 || a.PIDStart != 1 {
		t.Fatalf("SetAgentPID overwrote the supervisor's record: %+v", a)
	}
	// Once the run has ended, a late heartbeat changes nothing.
	code := 143
	if err := db.SetAgentState(ctx, "t", "a", "r2", mailbox.StateExited, 0, &code); err != nil {
		t.Fatal(err)
	}
	c.Add(time.Minute)
	db.Heartbeat(ctx, "t", "a", "r2", 0)
	if a, _ := db.Agent(ctx, "t", "a"); a.HeartbeatAt == nil || a.HeartbeatAt.Equal(c.Now()) {
		t.Fatalf("heartbeat renewed after the exit: %+v", a)
	}
	// Nor does a late start: the ended run's agent must not start.
	if err := db.StartRun(ctx, "t", "a", "r2", p, 0); !errors.Is(err, mailbox.ErrSuperseded) {
		t.Fatalf("StartRun of an ended run: %v, want ErrSuperseded", err)
	}
	if a, _ := db.Agent(ctx, "t", "a"); a.State != mailbox.StateExited || a.PID != 7 {
		t.Fatalf("a late start changed the ended run's record: %+v", a)
	}
}

// A mailbox of version 6 kept each ask's question time as a team setting;
// version 7 moves it into the ask's own column and drops the setting.
func TestMigrationMovesQuestionTime(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v6.db")
	r := raw(t, path)
	if _, err := r.Exec(`PRAGMA journal_mode = WAL`); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"001_init", "002_stale_preview", "003_agent_identity", "004_slack", "005_fleet", "006_drain_lease"} {
		ddl, err := os.ReadFile("migrations/" + f + ".sql")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Exec(string(ddl)); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	for _, q := range []string{
		`PRAGMA user_version = 6`,
		`INSERT INTO asks (id, team, agent, kind, question, state, created_at) VALUES (4, 't', 'w1', 'question', 'which?', 'awaiting', 1)`,
		`INSERT INTO asks (id, team, agent, kind, question, state, created_at) VALUES (5, 't', 'w2', 'question', 'where?', 'awaiting', 1)`,
		`INSERT INTO settings (team, key, value) VALUES ('t', 'ask/4/question_at', '2025-03-01T12:00:07Z'), ('t', 'paused', 'yes')`,
	} {
		if _, err := r.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	r.Close()

	db, err := mailbox.Open(ctx, path, mailbox.Options{})
	if err != nil {
		t.Fatalf("Open of a version-6 mailbox: %v", err)
	}
	defer db.Close()
	for id, want := range map[int64]time.Time{4: time.Date(2025, 3, 1, 12, 0, 7, 0, time.UTC), 5: {}} {
		got, err := db.AskQuestionTime(ctx, mailbox.Ask{ID: id, Team: "t"})
		if err != nil || !got.Equal(want) {
			t.Errorf("ask %d: question time %v, %v; want %v", id, got, err, want)
		}
	}
	if _, ok, _ := db.Setting(ctx, "t", "ask/4/question_at"); ok {
		t.Error("the question-time setting is still there")
	}
	if v, ok, _ := db.Setting(ctx, "t", "paused"); !ok || v != "yes" {
		t.Errorf("another setting was touched: %q %v", v, ok)
	}
}

// Options.Existing (shell completion) opens a current mailbox and changes
// no other: an older schema stays as it is, an empty database empty.
func TestOpenExisting(t *testing.T) {
	ctx := context.Background()
	path := sqliteBackend.fresh(t)
	db := open(t, path, nil)
	want, _ := db.SchemaVersion(ctx)
	db.Close()
	if db, err := mailbox.Open(ctx, path, mailbox.Options{Existing: true}); err != nil {
		t.Fatalf("Existing on a current mailbox: %v", err)
	} else {
		db.Close()
	}
	r := raw(t, path)
	if _, err := r.Exec(fmt.Sprintf("PRAGMA user_version = %d", want-1)); err != nil {
		t.Fatal(err)
	}
	if db, err := mailbox.Open(ctx, path, mailbox.Options{Existing: true}); err == nil {
		db.Close()
		t.Fatal("Existing opened an older schema")
	}
	if v := count(t, r, "PRAGMA user_version"); v != want-1 {
		t.Errorf("Existing migrated the mailbox: version %d, want %d", v, want-1)
	}
	empty := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if db, err := mailbox.Open(ctx, empty, mailbox.Options{Existing: true}); err == nil {
		db.Close()
		t.Error("Existing opened an empty database")
	}
	if n := count(t, raw(t, empty), "SELECT count(*) FROM sqlite_master"); n != 0 {
		t.Errorf("Existing made %d schema objects in an empty database", n)
	}
}

// Open takes a SQLite mailbox's schema version from the file's header only
// while its WAL holds nothing: here a newer version waits in the WAL of a
// connection still open, the header says the current one, and Open must
// still refuse the file, named directly or through a link (whose WAL
// SQLite names after the link's target).
func TestOpenVersionBehindWAL(t *testing.T) {
	for _, viaLink := range []bool{false, true} {
		t.Run(fmt.Sprintf("link=%v", viaLink), func(t *testing.T) { testOpenVersionBehindWAL(t, viaLink) })
	}
}

func testOpenVersionBehindWAL(t *testing.T, viaLink bool) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	db, err := mailbox.Open(ctx, path, mailbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	current, err := db.SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	holder, err := raw(t, path).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if _, err := holder.ExecContext(ctx, `PRAGMA user_version = 99`); err != nil {
		t.Fatal(err)
	}
	h := readFile(t, path)[:100]
	if v := binary.BigEndian.Uint32(h[60:64]); int(v) != current {
		t.Fatalf("header version %d, want the checkpointed %d (the test needs the newer one in the WAL)", v, current)
	}
	if st, err := os.Stat(path + "-wal"); err != nil || st.Size() == 0 {
		t.Fatalf("WAL: %v, %v; want the newer version in it", st, err)
	}
	name := path
	if viaLink {
		name = filepath.Join(t.TempDir(), "link.db")
		if err := os.Symlink(path, name); err != nil {
			t.Fatal(err)
		}
	}
	if db, err := mailbox.Open(ctx, name, mailbox.Options{}); !errors.Is(err, mailbox.ErrTooNew) {
		if err == nil {
			db.Close()
		}
		t.Fatalf("Open of %s with version 99 in the WAL: %v, want ErrTooNew", name, err)
	}
}

// A mailbox whose header is whole but whose schema is not fails in Open,
// though Open asks no statement of it (the version is in the header).
func TestOpenDamagedSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	db, err := mailbox.Open(ctx, path, mailbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Page 1 after the header is the root of the schema table.
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xa5}, 4096-100), 100); err != nil {
		t.Fatal(err)
	}
	f.Close()
	db, err = mailbox.Open(ctx, path, mailbox.Options{})
	if err == nil {
		db.Close()
	}
	if !errors.Is(err, mailbox.ErrCorrupt) {
		t.Fatalf("Open of a mailbox with a damaged schema: %v, want ErrCorrupt", err)
	}
}

// SendKnown stores the message whether or not its recipient was spawned,
// and says which it was. After a drain or a stale that found nothing,
// TeamKnown is right about a known team and a typo alike; the answer an
// empty read left is taken once, within a second, and then the database is
// asked again.
func TestSendKnownTeamKnown(t *testing.T) { eachBackend(t, testSendKnownTeamKnown) }

func testSendKnownTeamKnown(t *testing.T, be backend) {
	ctx := context.Background()
	db, c, _ := newDB(t, be)
	if err := db.RecordLaunch(ctx, mailbox.Agent{Team: "t", Name: "w1", Type: "sh", Run: "r1", State: mailbox.StateRunning}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		to    string
		known bool
	}{{"w1", true}, {"w2", false}} {
		m, known, err := db.SendKnown(ctx, mailbox.Message{Team: "t", From: "lead", To: tc.to, Body: "hi"})
		if err != nil || m.ID == 0 || known != tc.known {
			t.Fatalf("SendKnown to %s: %+v, known %v, %v; want an id, known %v", tc.to, m, known, err, tc.known)
		}
	}
	none := func([]mailbox.Message) error { return nil }
	old := c.Now().Add(-time.Hour) // nothing sent so long ago: every stale below is empty
	for _, team := range []string{"t", "typo"} {
		if msgs, err := db.Drain(ctx, team, "nobody", 0, none); err != nil || len(msgs) != 0 {
			t.Fatalf("Drain of an empty inbox: %v, %v", msgs, err)
		}
		if known, err := db.TeamKnown(ctx, team); err != nil || known != (team == "t") {
			t.Fatalf("TeamKnown(%s) after an empty drain: %v, %v", team, known, err)
		}
		if msgs, err := db.Stale(ctx, team, "", old); err != nil || len(msgs) != 0 {
			t.Fatalf("Stale with nothing stale: %v, %v", msgs, err)
		}
		if known, err := db.TeamKnown(ctx, team); err != nil || known != (team == "t") {
			t.Fatalf("TeamKnown(%s) after an empty stale: %v, %v", team, known, err)
		}
	}
	if _, err := db.Stale(ctx, "late", "", old); err != nil {
		t.Fatal(err)
	}
	send(t, db, "late", "lead", "w1", "now it exists")
	if known, err := db.TeamKnown(ctx, "late"); err != nil || known {
		t.Fatalf("TeamKnown(late) just after its empty stale: %v, %v; want that read's answer, false", known, err)
	}
	if known, err := db.TeamKnown(ctx, "late"); err != nil || !known {
		t.Fatalf("TeamKnown(late) asked again: %v, %v; want true", known, err)
	}
	if _, err := db.Stale(ctx, "later", "", old); err != nil {
		t.Fatal(err)
	}
	send(t, db, "later", "lead", "w1", "now it exists")
	c.Add(2 * time.Second)
	if known, err := db.TeamKnown(ctx, "later"); err != nil || !known {
		t.Fatalf("TeamKnown(later) two seconds after its empty stale: %v, %v; want true", known, err)
	}
}
