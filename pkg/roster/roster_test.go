package roster_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/proc"
	"github.com/teamkit/teamkit/pkg/roster"
)

func TestDescribe(t *testing.T) {
	code := 0
	ask := &mailbox.Ask{ID: 7}
	me := os.Getpid()
	self, err := proc.Self()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	fresh, old := now.Add(-time.Second), now.Add(-5*time.Minute)
	for _, tc := range []struct {
		a    *mailbox.Agent
		ask  *mailbox.Ask
		want string
	}{
		{nil, nil, "never-spawned"},
		{&mailbox.Agent{State: mailbox.StateExited, ExitCode: &code}, nil, "exited code=0"},
		{&mailbox.Agent{State: mailbox.StateExited}, nil, "exited code=unknown"},
		{&mailbox.Agent{State: mailbox.StateExited, ExitCode: &code}, ask, "awaiting-human ask=7"},
		{&mailbox.Agent{State: mailbox.StateFailed}, nil, "failed-to-start"},
		{&mailbox.Agent{State: mailbox.StateRunning, PID: me, PIDStart: self.Start, BootID: self.Boot}, nil, fmt.Sprintf("running pid=%d", me)},
		{&mailbox.Agent{State: mailbox.StateRunning, PID: me, PIDStart: self.Start, BootID: self.Boot}, ask, fmt.Sprintf("running pid=%d", me)},
		{&mailbox.Agent{State: mailbox.StateReady, PID: me, PIDStart: self.Start, BootID: self.Boot}, nil, fmt.Sprintf("ready pid=%d", me)},
		// A live pid recorded without its start time and boot (an older
		// teamkit's record) is never taken for the run: it may be anyone.
		{&mailbox.Agent{State: mailbox.StateReady, PID: me}, nil, fmt.Sprintf("lost pid=%d", me)},
		{&mailbox.Agent{State: mailbox.StateRunning, PID: me, PIDStart: self.Start}, nil, fmt.Sprintf("lost pid=%d", me)},
		{&mailbox.Agent{State: mailbox.StateRunning, PID: 0}, nil, "lost pid=0"},
		{&mailbox.Agent{State: mailbox.StateReady, PID: 0}, ask, "awaiting-human ask=7"},
		{&mailbox.Agent{State: mailbox.StateStarting, PID: 0, Host: "here", UpdatedAt: fresh}, nil, "starting"},
		// A spawn killed between recording the launch and starting it.
		{&mailbox.Agent{State: mailbox.StateStarting, PID: 0, Host: "here", UpdatedAt: old}, nil, "lost never started"},
		// This process, but recorded with another start time or boot: not it.
		{&mailbox.Agent{State: mailbox.StateRunning, PID: me, PIDStart: self.Start + 1, BootID: self.Boot}, nil, fmt.Sprintf("lost pid=%d", me)},
		{&mailbox.Agent{State: mailbox.StateRunning, PID: me, PIDStart: self.Start, BootID: "old-boot"}, nil, fmt.Sprintf("lost pid=%d", me)},
		{&mailbox.Agent{State: mailbox.StateRunning, PID: me, PIDStart: self.Start, BootID: self.Boot, Host: "here"}, nil, fmt.Sprintf("running pid=%d", me)},
		// Another host: the heartbeat decides, never the pid.
		{&mailbox.Agent{State: mailbox.StateRunning, PID: me, Host: "b2", HeartbeatAt: &fresh, Heartbeat: time.Second}, nil, "running host=b2"},
		{&mailbox.Agent{State: mailbox.StateRunning, PID: me, Host: "b2", HeartbeatAt: &old, Heartbeat: time.Second}, nil, "lost host=b2 heartbeat=5m ago"},
		{&mailbox.Agent{State: mailbox.StateExited, ExitCode: &code, Host: "b2"}, nil, "exited code=0"},
	} {
		if got := roster.Describe(tc.a, tc.ask, roster.Here{Host: "here", Now: now}); got != tc.want {
			t.Errorf("Describe(%+v, %v) = %q, want %q", tc.a, tc.ask, got, tc.want)
		}
	}
}

// DescribeAll says what Describe says of each agent with its open ask,
// and reads the asks only when an agent listed is not running.
func TestDescribeAll(t *testing.T) {
	self, err := proc.Self()
	if err != nil {
		t.Fatal(err)
	}
	code := 0
	here := roster.Here{Host: "here", Now: time.Now()}
	live := &mailbox.Agent{Name: "live", State: mailbox.StateRunning, PID: self.PID, PIDStart: self.Start, BootID: self.Boot}
	failed := &mailbox.Agent{Name: "failed", State: mailbox.StateFailed}
	exited := &mailbox.Agent{Name: "exited", State: mailbox.StateExited, ExitCode: &code}
	gone := &mailbox.Agent{Name: "gone", State: mailbox.StateRunning, PID: self.PID, PIDStart: self.Start + 1, BootID: self.Boot}
	quiet := &mailbox.Agent{Name: "quiet", State: mailbox.StateExited, ExitCode: &code}
	// Holds and other hosts: an ask changes none of them.
	until := here.Now.Add(time.Hour)
	parked := &mailbox.Agent{Name: "parked", State: mailbox.StateExited, ExitCode: &code, ParkedUntil: &until}
	failing := &mailbox.Agent{Name: "failing", State: mailbox.StateExited, ExitCode: &code, RespawnFailures: mailbox.FailingAfter}
	fresh, old := here.Now.Add(-time.Second), here.Now.Add(-time.Hour)
	remote := &mailbox.Agent{Name: "remote", State: mailbox.StateRunning, Host: "b2", HeartbeatAt: &fresh, Heartbeat: time.Second}
	remoteGone := &mailbox.Agent{Name: "remote-gone", State: mailbox.StateRunning, Host: "b2", HeartbeatAt: &old, Heartbeat: time.Second}
	queued := &mailbox.Agent{Name: "queued", State: mailbox.StateQueued}
	never := &mailbox.Agent{Name: "never", State: mailbox.StateStarting, Host: "here", UpdatedAt: old}
	open := map[string]*mailbox.Ask{"exited": {ID: 7}, "gone": {ID: 8}, "live": {ID: 9}, "parked": {ID: 10}, "failing": {ID: 11},
		"remote": {ID: 12}, "remote-gone": {ID: 13}, "queued": {ID: 14}, "never": {ID: 15}}
	for _, tc := range []struct {
		agents []*mailbox.Agent
		reads  int
	}{
		{[]*mailbox.Agent{nil, live, failed, live, nil, parked, failing, remote, queued}, 0},
		{[]*mailbox.Agent{live, exited, gone, quiet, exited, nil}, 1},
		{[]*mailbox.Agent{remoteGone, never}, 1},
		{nil, 0},
	} {
		reads := 0
		got, err := roster.DescribeAll(tc.agents, here, func() (map[string]*mailbox.Ask, error) { reads++; return open, nil })
		if err != nil || len(got) != len(tc.agents) || reads != tc.reads {
			t.Fatalf("DescribeAll = %q, %v after %d reads of the asks; want %d descriptions after %d", got, err, reads, len(tc.agents), tc.reads)
		}
		for i, a := range tc.agents {
			var ask *mailbox.Ask
			if a != nil {
				ask = open[a.Name]
			}
			if want := roster.Describe(a, ask, here); got[i] != want {
				t.Errorf("DescribeAll[%d] = %q, want %q", i, got[i], want)
			}
		}
	}
	if _, err := roster.DescribeAll([]*mailbox.Agent{exited}, here, func() (map[string]*mailbox.Ask, error) { return nil, os.ErrPermission }); err != os.ErrPermission {
		t.Errorf("DescribeAll with the asks unreadable: %v, want the error", err)
	}
}

func TestRunStarted(t *testing.T) {
	if got := roster.RunStarted("20261202T140721Z-fded44e2"); got.Format("2006-01-02 15:04:05") != "2026-12-02 14:07:21" {
		t.Errorf("RunStarted = %v", got)
	}
	if got := roster.RunStarted("r1"); !got.IsZero() {
		t.Errorf("RunStarted(r1) = %v, want zero", got)
	}
}

// TestHolds: what counts against a host's cap. A queued or ended launch
// holds no slot; one being started does, until StartingGrace passes; any
// other while Judge says it is live.
func TestHolds(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	here := roster.Here{Host: "h", Now: now}
	me, err := proc.Self()
	if err != nil {
		t.Fatal(err)
	}
	fresh := now.Add(-time.Second)
	cases := []struct {
		name string
		a    mailbox.Agent
		want bool
	}{
		{"queued", mailbox.Agent{Host: "h", State: mailbox.StateQueued, UpdatedAt: fresh}, false},
		{"starting", mailbox.Agent{Host: "h", State: mailbox.StateStarting, UpdatedAt: fresh}, true},
		{"starting, long ago", mailbox.Agent{Host: "h", State: mailbox.StateStarting, UpdatedAt: now.Add(-2 * roster.StartingGrace)}, false},
		{"exited", mailbox.Agent{Host: "h", State: mailbox.StateExited, PID: os.Getpid()}, false},
		{"running, this process", mailbox.Agent{Host: "h", State: mailbox.StateRunning, PID: me.PID, PIDStart: me.Start, BootID: me.Boot}, true},
	}
	for _, c := range cases {
		if got := roster.Holds(c.a, here); got != c.want {
			t.Errorf("%s: Holds = %v, want %v", c.name, got, c.want)
		}
	}
}

// Silence is measured by the database's clock (here.Now), for a run
// observed running or ready only.
func TestSilence(t *testing.T) {
	now := time.Date(2026, 12, 4, 5, 0, 0, 0, time.UTC)
	here := roster.Here{Host: "h1", Now: now}
	at := now.Add(-90 * time.Second)
	ahead := now.Add(time.Second) // written by a clock a little ahead
	for _, tc := range []struct {
		a     *mailbox.Agent
		state string
		want  time.Duration
		ok    bool
	}{
		{&mailbox.Agent{LastActiveAt: &at}, roster.Running, 90 * time.Second, true},
		{&mailbox.Agent{LastActiveAt: &at}, roster.Ready, 90 * time.Second, true},
		{&mailbox.Agent{LastActiveAt: &ahead}, roster.Running, 0, true},
		{&mailbox.Agent{LastActiveAt: &at}, roster.Lost, 0, false},
		{&mailbox.Agent{LastActiveAt: &at}, roster.Exited, 0, false},
		{&mailbox.Agent{}, roster.Running, 0, false}, // not started yet
		{nil, roster.NeverSpawned, 0, false},
	} {
		if d, ok := roster.Silence(tc.a, tc.state, here); d != tc.want || ok != tc.ok {
			t.Errorf("Silence(%v, %s) = %v, %v; want %v, %v", tc.a, tc.state, d, ok, tc.want, tc.ok)
		}
	}
}

// TestHolds: a park and a crash loop show in the state, and Respawnable
// refuses a re-spawn before the park ends and while the agent is failing.
func TestParkedFailing(t *testing.T) {
	code := 1
	now := time.Date(2026, 12, 4, 5, 0, 0, 0, time.UTC)
	later, earlier := now.Add(90*time.Second), now.Add(-time.Second)
	here := roster.Here{Host: "h", Now: now}
	ask := &mailbox.Ask{ID: 3}
	for _, tc := range []struct {
		a     mailbox.Agent
		state string
		ok    bool
	}{
		{mailbox.Agent{State: mailbox.StateExited, ExitCode: &code, ParkedUntil: &later}, "parked until=2026-12-04T05:01:30Z", false},
		{mailbox.Agent{State: mailbox.StateExited, ExitCode: &code, ParkedUntil: &later, ParkBackoff: 2 * time.Minute}, "parked until=2026-12-04T05:01:30Z backoff=2m0s", false},
		{mailbox.Agent{State: mailbox.StateExited, ExitCode: &code, ParkedUntil: &earlier}, "parked until=2026-12-04T04:59:59Z due", true},
		{mailbox.Agent{State: mailbox.StateExited, ExitCode: &code, ParkedUntil: &earlier, RespawnFailures: 3}, "failing failures=3", false},
		{mailbox.Agent{State: mailbox.StateExited, ExitCode: &code, RespawnFailures: 2}, "awaiting-human ask=3", true},
		{mailbox.Agent{State: mailbox.StateExited, ExitCode: &code, RespawnFailures: 3}, "failing failures=3", false},
	} {
		if got := roster.Describe(&tc.a, ask, here); got != tc.state {
			t.Errorf("Describe(%+v) = %q, want %q", tc.a, got, tc.state)
		}
		if ok, why := roster.Respawnable(tc.a, now); ok != tc.ok || ok != (why == "") {
			t.Errorf("Respawnable(%+v) = %v %q, want %v", tc.a, ok, why, tc.ok)
		}
	}
}

func TestAge(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                                     "0s",
		59*time.Second + 900*time.Millisecond: "59s",
		time.Minute:                           "1m",
		59*time.Minute + 59*time.Second:       "59m",
		3*time.Hour + 5*time.Minute:           "3h05m",
		24*time.Hour - time.Second:            "23h59m",
		52*time.Hour + 30*time.Minute:         "2d04h",
		400 * 24 * time.Hour:                  "400d00h",
	} {
		if got := roster.Age(d); got != want {
			t.Errorf("Age(%v) = %q, want %q", d, got, want)
		}
	}
}

// Team judges a fleet's local runs on two goroutines at once: each run
// still gets its own supervisor's answer, whichever goroutine read it.
func TestTeamJudgesAFleet(t *testing.T) {
	ctx := context.Background()
	db, err := mailbox.Open(ctx, filepath.Join(t.TempDir(), "m.db"), mailbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	self, err := proc.Self()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for i := range 60 {
		a := mailbox.Agent{Team: "fleet", Name: fmt.Sprintf("a%02d", i), Type: "t", Run: fmt.Sprintf("r%d", i),
			State: mailbox.StateRunning, Host: "here", PID: self.PID, PIDStart: self.Start, BootID: self.Boot}
		switch i % 3 {
		case 0:
			want[a.Name] = fmt.Sprintf("running pid=%d", self.PID)
		case 1: // the same pid, another process's start: not its supervisor
			a.PIDStart++
			want[a.Name] = fmt.Sprintf("lost pid=%d", self.PID)
		case 2:
			a.State = mailbox.StateReady
			want[a.Name] = fmt.Sprintf("ready pid=%d", self.PID)
		}
		if err := db.RecordLaunch(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	here, err := roster.At(ctx, db, "here")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := roster.Team(ctx, db, "fleet", here)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(want) {
		t.Fatalf("Team listed %d agents, want %d", len(entries), len(want))
	}
	for _, e := range entries {
		got := e.State
		if e.Detail != "" {
			got += " " + e.Detail
		}
		if got != want[e.Name] {
			t.Errorf("%s: %q, want %q", e.Name, got, want[e.Name])
		}
	}
}
