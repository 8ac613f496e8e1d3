package launch

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/teamkit/teamkit/pkg/mailbox"
)

// spoolTeam is a mailbox and a run directory holding team t's agent w1's
// directory: runs, and w1's directory in it.
func spoolTeam(t *testing.T) (context.Context, *mailbox.DB, string, string) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := mailbox.Open(ctx, filepath.Join(dir, "mail.db"), mailbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	runs := filepath.Join(dir, "runs")
	agentDir := filepath.Join(runs, "t", "w1")
	if err := os.MkdirAll(agentDir, 0o700); err != nil {
		t.Fatal(err)
	}
	return ctx, db, runs, agentDir
}

// TestSpoolStamp walks the stamp's protocol (spool.go): a look that finds
// nothing stamps the team, a spool takes the stamp away and so the next
// look records the end, and an end spooled while a look is in progress
// keeps that look from stamping.
func TestSpoolStamp(t *testing.T) {
	ctx, db, runs, agentDir := spoolTeam(t)
	teamDir := filepath.Dir(agentDir)
	stamp := filepath.Join(teamDir, nothingSpooled)
	launchRun := func(run string) string {
		t.Helper()
		if err := db.RecordLaunch(ctx, mailbox.Agent{Team: "t", Name: "w1", Run: run, State: mailbox.StateRunning}); err != nil {
			t.Fatal(err)
		}
		return SpoolPath(agentDir, run)
	}
	exitCode := func() int {
		t.Helper()
		a, err := db.Agent(ctx, "t", "w1")
		if err != nil {
			t.Fatal(err)
		}
		if a.State != mailbox.StateExited || a.ExitCode == nil {
			return -1
		}
		return *a.ExitCode
	}
	entries := func() []string {
		t.Helper()
		es, err := os.ReadDir(teamDir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		return names
	}

	RecordSpooled(ctx, db, runs, "t")
	if _, err := os.Stat(stamp); err != nil {
		t.Fatalf("a look that found nothing left no stamp: %v", err)
	}

	// A spool takes the stamp away: the next look records the end.
	path := launchRun("r1")
	if err := spool(path, spooled{ExitCode: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stamp); !os.IsNotExist(err) {
		t.Fatalf("the stamp outlived a spool: %v", err)
	}
	RecordSpooled(ctx, db, runs, "t")
	if got := exitCode(); got != 3 {
		t.Fatalf("exit code %d recorded, want the spooled 3", got)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the recorded spool file stayed: %v", err)
	}
	if _, err := os.Stat(stamp); err != nil {
		t.Fatalf("a look that recorded everything left no stamp: %v", err)
	}

	// While the stamp holds a look reads no agent's directory: an end
	// whose directory is older than the stamp stays unrecorded.
	path = launchRun("r2")
	if err := os.WriteFile(path, []byte(`{"exit_code":4}`), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(stamp)
	if err != nil {
		t.Fatal(err)
	}
	before := st.ModTime().Add(-time.Second)
	if err := os.Chtimes(agentDir, before, before); err != nil {
		t.Fatal(err)
	}
	RecordSpooled(ctx, db, runs, "t")
	if got := exitCode(); got != -1 {
		t.Fatalf("a stamped look recorded exit code %d", got)
	}

	// An end that lands without taking the stamp away (a supervisor of an
	// older teamkit, or one killed between its file and the stamp's
	// removal) makes its directory newer than the stamp: it is recorded.
	now := time.Now()
	if err := os.Chtimes(agentDir, now, now); err != nil {
		t.Fatal(err)
	}
	RecordSpooled(ctx, db, runs, "t")
	if got := exitCode(); got != 4 {
		t.Fatalf("exit code %d recorded, want 4 from the end spooled behind the stamp's back", got)
	}

	// An end spooled while a look is in progress (its scan file down, the
	// directories already read) removes the scan file, so that look cannot
	// stamp; a look killed part way leaves its scan file and no stamp.
	os.Remove(stamp)
	scan, err := os.CreateTemp(teamDir, scanPrefix+"*")
	if err != nil {
		t.Fatal(err)
	}
	scan.Close()
	path = launchRun("r3")
	if err := spool(path, spooled{ExitCode: 5}); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(scan.Name(), stamp); err == nil {
		t.Fatal("the look in progress could still stamp after an end was spooled")
	}
	RecordSpooled(ctx, db, runs, "t")
	if got := exitCode(); got != 5 {
		t.Fatalf("exit code %d recorded, want the spooled 5", got)
	}
	if got := entries(); len(got) != 2 || got[0] != nothingSpooled || got[1] != "w1" {
		t.Fatalf("team directory holds %q, want the stamp and the agent's directory", got)
	}

	// A scan file older than staleScan, left by a look killed part way,
	// is removed by the next look.
	old := filepath.Join(teamDir, scanPrefix+"killed")
	if err := os.WriteFile(old, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	long := time.Now().Add(-2 * staleScan)
	if err := os.Chtimes(old, long, long); err != nil {
		t.Fatal(err)
	}
	RecordSpooled(ctx, db, runs, "t")
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Fatalf("a killed look's scan file stayed: %v", err)
	}

	// An end that cannot be recorded keeps the team unstamped.
	os.Remove(stamp)
	launchRun("r4")
	if err := os.WriteFile(SpoolPath(agentDir, "r4"), []byte("not json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	RecordSpooled(ctx, db, runs, "t")
	if _, err := os.Stat(stamp); !os.IsNotExist(err) {
		t.Fatalf("a look that left an end unrecorded stamped the team: %v", err)
	}
}

// A spool file that holds no end a look can read is set aside once it is a
// minute old (an older teamkit's supervisor wrote in place, so a younger
// one may be half written): left, it kept every look from stamping.
func TestSpoolUnreadableSetAside(t *testing.T) {
	ctx, db, runs, agentDir := spoolTeam(t)
	stamp := filepath.Join(runs, "t", nothingSpooled)
	empty, cut := SpoolPath(agentDir, "r1"), SpoolPath(agentDir, "r2")
	for _, f := range []string{empty, cut} {
		if err := os.WriteFile(f, []byte(map[string]string{empty: "", cut: `{"exit_code":`}[f]), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	// Young: perhaps still being written. Both stay; no stamp.
	RecordSpooled(ctx, db, runs, "t")
	for _, f := range []string{empty, cut} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("a young unreadable spool file went: %v", err)
		}
	}
	if _, err := os.Stat(stamp); !os.IsNotExist(err) {
		t.Fatalf("a look that left unread files stamped the team: %v", err)
	}

	old := time.Now().Add(-2 * unreadableAfter)
	for _, f := range []string{empty, cut} {
		if err := os.Chtimes(f, old, old); err != nil {
			t.Fatal(err)
		}
	}
	RecordSpooled(ctx, db, runs, "t")
	for _, f := range []string{empty, cut} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Fatalf("an old unreadable spool file stayed where looks read it: %v", err)
		}
		if _, err := os.Stat(f + ".unreadable"); err != nil {
			t.Fatalf("an unreadable spool file was not kept aside: %v", err)
		}
	}
	if _, err := os.Stat(stamp); err != nil {
		t.Fatalf("the look that set the files aside left no stamp: %v", err)
	}
}

// A look begun before the mailbox is open (spawn list's) records what
// RecordSpooled would: an end spooled before it began, and, with the stamp
// it then leaves, nothing more the next time.
func TestLookSpooledEarly(t *testing.T) {
	ctx, db, runs, agentDir := spoolTeam(t)
	if err := db.RecordLaunch(ctx, mailbox.Agent{Team: "t", Name: "w1", Run: "r1", State: mailbox.StateRunning}); err != nil {
		t.Fatal(err)
	}
	if err := spool(SpoolPath(agentDir, "r1"), spooled{ExitCode: 5}); err != nil {
		t.Fatal(err)
	}
	look := LookSpooled(runs, "t")
	look.Record(ctx, db)
	a, err := db.Agent(ctx, "t", "w1")
	if err != nil {
		t.Fatal(err)
	}
	if a.State != mailbox.StateExited || a.ExitCode == nil || *a.ExitCode != 5 {
		t.Fatalf("after the look: state %s, exit code %v; want exited with the spooled 5", a.State, a.ExitCode)
	}
	if _, err := os.Stat(filepath.Join(runs, "t", nothingSpooled)); err != nil {
		t.Fatalf("the look left no stamp: %v", err)
	}
	LookSpooled(runs, "t").Record(ctx, db) // the stamp holds: nothing to do, and no hang
}

// A guard that cannot record a run's end spools it; the end recorded later
// is the guard's: crashed for a supervisor that died, stopped for one
// stopped while giving an answer back.
func TestSpooledGuardEnd(t *testing.T) {
	for _, c := range []struct {
		stopped     bool
		end, detail string
	}{{false, "crashed", guardDetail}, {true, "stopped", guardStoppedDetail}} {
		ctx, db, runs, agentDir := spoolTeam(t)
		if err := db.RecordLaunch(ctx, mailbox.Agent{Team: "t", Name: "w1", Run: "r1", State: mailbox.StateRunning}); err != nil {
			t.Fatal(err)
		}
		if err := db.RecordRun(ctx, mailbox.RunRecord{Team: "t", Name: "w1", Run: "r1", StartedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		ended := time.Now()
		if err := spool(SpoolPath(agentDir, "r1"), spooled{CrashedAt: &ended, Stopped: c.stopped}); err != nil {
			t.Fatal(err)
		}
		RecordSpooled(ctx, db, runs, "t")
		r, err := db.Run(ctx, "t", "r1")
		if err != nil {
			t.Fatal(err)
		}
		if r.End != c.end || r.Detail != c.detail || r.EndedAt == nil {
			t.Errorf("stopped=%v: run recorded as %q (%q, ended %v), want %q (%q)", c.stopped, r.End, r.Detail, r.EndedAt, c.end, c.detail)
		}
	}
}

// A guard whose outage outlasts its patience for giving an answer back
// spools the ask with the end: the look that records the end gives the
// answer back first, so resume delivers it again.
func TestSpooledGuardGivesBack(t *testing.T) {
	ctx, db, runs, agentDir := spoolTeam(t)
	ask, _, err := db.CreateAsk(ctx, mailbox.Ask{Team: "t", Agent: "w1", Kind: mailbox.KindQuestion, Question: "which?"})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := db.DecideAsk(ctx, ask.ID, mailbox.Decision{Answer: "that one", DecidedBy: "alice", Decision: mailbox.DecisionAnswered}); !ok || err != nil {
		t.Fatalf("DecideAsk = %v, %v", ok, err)
	}
	if ok, err := db.LaunchAnswer(ctx, ask.ID, "r1"); !ok || err != nil {
		t.Fatalf("LaunchAnswer = %v, %v", ok, err)
	}
	if err := db.RecordLaunch(ctx, mailbox.Agent{Team: "t", Name: "w1", Run: "r1", State: mailbox.StateStarting}); err != nil {
		t.Fatal(err)
	}
	if err := db.StartRun(ctx, "t", "w1", "r1", mailbox.Process{PID: 1}, ask.ID); err != nil {
		t.Fatal(err)
	}
	ended := time.Now()
	if err := spool(SpoolPath(agentDir, "r1"), spooled{CrashedAt: &ended, Ask: ask.ID}); err != nil {
		t.Fatal(err)
	}
	RecordSpooled(ctx, db, runs, "t")
	got, err := db.Ask(ctx, ask.ID)
	if err != nil || got.ResumedRun != "" || got.LaunchRun != "r1" {
		t.Fatalf("ask after the spooled end = %+v, %v; want the answer given back (launch_run r1, resumed_run empty)", got, err)
	}
	if a, err := db.Agent(ctx, "t", "w1"); err != nil || a.State != mailbox.StateExited {
		t.Fatalf("agent after the spooled end = %+v, %v; want exited", a, err)
	}
}
