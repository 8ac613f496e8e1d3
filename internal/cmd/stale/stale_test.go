package stale_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/teamkit/teamkit/internal/cmd/stale"
	"github.com/teamkit/teamkit/internal/command/commandtest"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/proc"
	"github.com/teamkit/teamkit/pkg/roster"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

type result = commandtest.Result

// harness runs the stale command in-process against one database, with st
// open on it.
type harness struct {
	*commandtest.Harness
	st *mailbox.DB
}

// newHarness makes a mailbox whose clock is t0 and, for team crew:
// three messages sent at t0 to ghost (never spawned), done (exited 3) and
// busy (this process, alive); one read message; one sent 8 minutes later;
// and one for another team.
func newHarness(t *testing.T) *harness {
	h := &harness{Harness: commandtest.New(t, "stale", stale.App)}
	h.Now = t0
	ctx := context.Background()
	clock := t0
	st, err := mailbox.Open(ctx, h.DB, mailbox.Options{Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h.st = st
	send := func(team, to, body string) {
		if _, err := st.Send(ctx, mailbox.Message{Team: team, From: "boss", To: to, Body: body}); err != nil {
			t.Fatal(err)
		}
	}
	send("crew", "ghost", "task for ghost\nwith details") // 1
	send("crew", "done", "task for done")                 // 2
	send("crew", "busy", "task for busy")                 // 3
	send("crew", "reader", "already read")                // 4
	send("other", "ghost", "another team")                // 5
	if _, err := st.Drain(ctx, "crew", "reader", 0, func([]mailbox.Message) error { return nil }); err != nil {
		t.Fatal(err)
	}
	clock = t0.Add(8 * time.Minute)
	send("crew", "ghost", "recent") // 6
	code := 3
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.RecordLaunch(ctx, mailbox.Agent{Team: "crew", Name: "done", Type: "codex", Run: "r1", PID: 999999, State: mailbox.StateRunning}))
	must(st.SetAgentState(ctx, "crew", "done", "r1", mailbox.StateExited, 0, &code))
	self, err := proc.Self()
	must(err)
	must(st.RecordLaunch(ctx, mailbox.Agent{Team: "crew", Name: "busy", Type: "claude", Run: "r2", State: mailbox.StateStarting}))
	must(st.StartRun(ctx, "crew", "busy", "r2", mailbox.Process{PID: self.PID, Start: self.Start, Boot: self.Boot}, 0))
	return h
}

func (h *harness) run(args ...string) result { h.T.Helper(); return h.Run(args...) }

// rows returns the ids and recipient columns of the table, header checked.
func rows(t *testing.T, out string) map[string]string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[0], "RECIPIENT") {
		t.Fatalf("not a table with a RECIPIENT column: %q", out)
	}
	got := map[string]string{}
	for _, l := range lines[1:] {
		got[strings.Fields(l)[0]] = l
	}
	return got
}

func TestStaleTable(t *testing.T) {
	h := newHarness(t)
	h.Now = t0.Add(11 * time.Minute)
	r := h.run("crew")
	if r.Code != 2 || r.Stderr != "" {
		t.Fatalf("stale crew at +11m: exit %d, stderr %q; want 2 and nothing on stderr", r.Code, r.Stderr)
	}
	got := rows(t, r.Stdout)
	if len(got) != 3 {
		t.Fatalf("stale crew listed %d messages, want ids 1-3: %q", len(got), r.Stdout)
	}
	for id, want := range map[string][]string{
		"1": {"ghost", "boss", "11m", "never-spawned", "task for ghost"},
		"2": {"done", "exited code=3", "task for done"},
		"3": {"busy", fmt.Sprintf("running pid=%d", os.Getpid()), "task for busy"},
	} {
		for _, w := range want {
			if !strings.Contains(got[id], w) {
				t.Errorf("row %s = %q, want it to contain %q", id, got[id], w)
			}
		}
	}
	if strings.Contains(r.Stdout, "with details") {
		t.Errorf("table shows more than the first line: %q", r.Stdout)
	}
}

func TestStaleMinAndExitCodes(t *testing.T) {
	h := newHarness(t)
	h.Now = t0.Add(11 * time.Minute)
	for _, tc := range []struct {
		args []string
		code int
		ids  []string
	}{
		{[]string{"crew", "--min", "12"}, 0, nil},                     // flag after the positional
		{[]string{"--min", "12", "crew"}, 0, nil},                     // and before
		{[]string{"crew", "--min", "10"}, 2, []string{"1", "2", "3"}}, // the cron line
		{[]string{"crew", "--min", "3.5"}, 2, []string{"1", "2", "3"}},
		{[]string{"crew", "--min", "3"}, 2, []string{"1", "2", "3", "6"}}, // 6 is exactly 3m old: at the cut-off counts
		{[]string{"crew", "--min", "0", "--to", "ghost"}, 2, []string{"1", "6"}},
		{[]string{"--to", "done", "crew"}, 2, []string{"2"}},
		{[]string{"crew", "--to", "reader", "--min", "0"}, 0, nil}, // read messages are never stale
		{[]string{"crew", "--to", "nobody"}, 0, nil},
		{[]string{"empty-team"}, 0, nil},
	} {
		r := h.run(tc.args...)
		if r.Code != tc.code {
			t.Errorf("stale %q: exit %d, want %d (stdout %q stderr %q)", tc.args, r.Code, tc.code, r.Stdout, r.Stderr)
			continue
		}
		if tc.code == 0 {
			// A team with no agent and no message is noted (a typo?);
			// the exit code stays 0.
			wantErr := ""
			if tc.args[0] == "empty-team" {
				wantErr = `stale: note: team "empty-team" has no agents and no messages in ` + h.DB + " (a typo?)\n"
			}
			if r.Stdout != "" || r.Stderr != wantErr {
				t.Errorf("stale %q with nothing stale printed %q / %q", tc.args, r.Stdout, r.Stderr)
			}
			continue
		}
		got := rows(t, r.Stdout)
		if len(got) != len(tc.ids) {
			t.Errorf("stale %q listed %q, want ids %v", tc.args, r.Stdout, tc.ids)
		}
		for _, id := range tc.ids {
			if _, ok := got[id]; !ok {
				t.Errorf("stale %q lacks id %s: %q", tc.args, id, r.Stdout)
			}
		}
	}
	// Default --min is 10.
	h.Now = t0.Add(9 * time.Minute)
	if r := h.run("crew"); r.Code != 0 {
		t.Fatalf("stale crew at +9m: exit %d, want 0", r.Code)
	}
	h.Now = t0.Add(10 * time.Minute)
	if r := h.run("crew"); r.Code != 2 {
		t.Fatalf("stale crew at +10m: exit %d, want 2", r.Code)
	}
	// Reading clears it.
	for _, who := range []string{"ghost", "done", "busy"} {
		h.st.Drain(context.Background(), "crew", who, 0, func([]mailbox.Message) error { return nil })
	}
	if r := h.run("crew", "--min", "0"); r.Code != 0 || r.Stdout != "" {
		t.Fatalf("stale after every message was read: %+v", r)
	}
}

func TestStaleJSON(t *testing.T) {
	h := newHarness(t)
	h.Now = t0.Add(11 * time.Minute)
	r := h.run("crew", "--json")
	if r.Code != 2 {
		t.Fatalf("exit %d", r.Code)
	}
	lines := strings.Split(strings.TrimRight(r.Stdout, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("want one object per line, 3 lines: %q", r.Stdout)
	}
	var recips []string
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		for _, k := range []string{"id", "team", "from", "to", "subject", "body", "reply_to", "created_at", "read_at", "age_seconds", "recipient", "agent"} {
			if _, ok := m[k]; !ok {
				t.Errorf("line %d lacks %q: %s", i, k, l)
			}
		}
		if m["age_seconds"] != float64(660) || m["created_at"] != "2025-03-01T12:00:00Z" || m["read_at"] != nil {
			t.Errorf("line %d: age/created/read = %v %v %v", i, m["age_seconds"], m["created_at"], m["read_at"])
		}
		recips = append(recips, m["recipient"].(string))
		if i == 0 && m["agent"] != nil {
			t.Errorf("never-spawned agent = %v, want null", m["agent"])
		}
		if i == 1 {
			a, _ := m["agent"].(map[string]any)
			if a == nil || a["exit_code"] != float64(3) || a["state"] != "exited" || a["run"] != "r1" {
				t.Errorf("exited agent = %v", m["agent"])
			}
		}
	}
	want := []string{"never-spawned", "exited code=3", fmt.Sprintf("running pid=%d", os.Getpid())}
	if strings.Join(recips, "|") != strings.Join(want, "|") {
		t.Fatalf("recipients %q, want %q", recips, want)
	}
}

func TestStaleIdentityAndUsage(t *testing.T) {
	h := newHarness(t)
	h.Now = t0.Add(11 * time.Minute)
	h.Vars["TEAMKIT_TEAM"] = "crew"
	if r := h.run("--min", "10"); r.Code != 2 || len(rows(t, r.Stdout)) != 3 {
		t.Fatalf("stale with TEAMKIT_TEAM: %+v", r)
	}
	delete(h.Vars, "TEAMKIT_TEAM")
	for _, args := range [][]string{
		{},
		{"a/b"},
		{"$(x)"},
		{"crew", "extra"},
		{"crew", "--to", "../x"},
		{"crew", "--min", "-1"},
		{"crew", "--min", "soon"},
		{"crew", "--bogus"},
		{"crew", "--idle", "-1"},
		{"crew", "--idle", "NaN"},
		{"crew", "--idle", "5", "--min", "1"}, // one listing or the other
	} {
		r := h.run(args...)
		if r.Code != 64 || r.Stdout != "" || !strings.HasPrefix(r.Stderr, "stale: error:") {
			t.Errorf("stale %q: exit %d stdout %q stderr %q; want a usage error", args, r.Code, r.Stdout, r.Stderr)
		}
	}
}

// --idle lists the running agents silent for N minutes: busy started at
// +8m (its run's start is its last activity until a heartbeat says more),
// so at +11m it has been silent 3m; done has exited, ghost never ran.
func TestStaleIdle(t *testing.T) {
	h := newHarness(t)
	h.Now = t0.Add(11 * time.Minute)
	r := h.run("crew", "--idle", "2.5")
	if r.Code != 2 || r.Stderr != "" {
		t.Fatalf("stale crew --idle 2.5: exit %d, stderr %q; want 2", r.Code, r.Stderr)
	}
	lines := strings.Split(strings.TrimRight(r.Stdout, "\n"), "\n")
	if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "AGENT TYPE IDLE SINCE STATE LOG" {
		t.Fatalf("want a header and busy's row: %q", r.Stdout)
	}
	want := []string{"busy", "claude", "3m", "2025-03-01T12:08:00Z", "running", fmt.Sprintf("pid=%d", os.Getpid())}
	if got := strings.Fields(lines[1]); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("row %q, want %q", got, want)
	}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"crew", "--idle", "3"}, 2}, // exactly 3m silent: at the cut-off counts
		{[]string{"crew", "--idle", "3.1"}, 0},
		{[]string{"crew", "--idle", "0", "--to", "busy"}, 2},
		{[]string{"crew", "--idle", "0", "--to", "done"}, 0},  // ended: gone, not silent
		{[]string{"crew", "--idle", "0", "--to", "ghost"}, 0}, // never ran
	} {
		r := h.run(tc.args...)
		if r.Code != tc.code || (tc.code == 0) != (r.Stdout == "") {
			t.Errorf("stale %q: exit %d, stdout %q; want exit %d", tc.args, r.Code, r.Stdout, tc.code)
		}
	}
	r = h.run("crew", "--idle", "1", "--json")
	var row map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &row); r.Code != 2 || err != nil {
		t.Fatalf("--idle --json: exit %d, %q, %v", r.Code, r.Stdout, err)
	}
	a, _ := row["agent"].(map[string]any)
	if row["name"] != "busy" || row["team"] != "crew" || row["idle_seconds"] != float64(180) || row["last_active_at"] != "2025-03-01T12:08:00Z" ||
		row["state"] != fmt.Sprintf("running pid=%d", os.Getpid()) || a == nil || a["last_active_at"] != "2025-03-01T12:08:00Z" {
		t.Errorf("--idle --json row = %v", row)
	}
	// A heartbeat at +11m that says the agent printed 10 s before makes
	// it active.
	st, err := mailbox.Open(context.Background(), h.DB, mailbox.Options{Now: func() time.Time { return h.Now }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Heartbeat(context.Background(), "crew", "busy", "r2", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if r := h.run("crew", "--idle", "0.1", "--json"); r.Code != 2 || !strings.Contains(r.Stdout, `"idle_seconds":10,`) {
		t.Errorf("after a heartbeat with activity 10s ago: exit %d %q, want idle_seconds 10", r.Code, r.Stdout)
	}
	if r := h.run("crew", "--idle", "0.5"); r.Code != 0 {
		t.Errorf("after a heartbeat with activity: exit %d %q, want 0", r.Code, r.Stdout)
	}
}

func TestAge(t *testing.T) {
	for d, want := range map[time.Duration]string{
		45 * time.Second: "45s", 12 * time.Minute: "12m", 3*time.Hour + 5*time.Minute: "3h05m", 52 * time.Hour: "2d04h",
	} {
		if got := roster.Age(d); got != want {
			t.Errorf("Age(%v) = %q, want %q", d, got, want)
		}
	}
}

// A refused command line never opens the mailbox: its file is not made.
func TestStaleRefusedBeforeTheMailbox(t *testing.T) {
	h := commandtest.New(t, "stale", stale.App)
	for _, args := range [][]string{{}, {"a/b"}, {"crew", "extra"}, {"crew", "--to", "../x"}, {"crew", "--min", "-1"}} {
		if r := h.Run(args...); r.Code != 64 {
			t.Errorf("stale %q: exit %d, stderr %q; want 64", args, r.Code, r.Stderr)
		}
	}
	if _, err := os.Stat(h.DB); !os.IsNotExist(err) {
		t.Fatalf("a refused stale touched the mailbox %s (%v)", h.DB, err)
	}
}
