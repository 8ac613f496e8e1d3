package launch

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/runstream"
)

// A run's end that the supervisor could not record (the mailbox out of
// reach past its retries) is spooled beside the run's files, and the next
// command that reads the roster on this host records it (RecordSpooled).
//
// spawn list, spawn runs, spawn stop, stale and resume look on every call,
// and looking read every agent's run directory: with 200 agents, 2–3 ms of
// a spawn list that takes 10. So a look that recorded everything it found
// leaves a stamp in the team's run directory (nothingSpooled), and while
// the stamp holds, the next look reads only the team's directory and the
// times of the agents' directories.
//
// The stamp holds while no agent's run directory changed since the look
// that left it began. It is that look's scan file, renamed, and so keeps
// the time the look put it down, before it read any directory; a spool
// file lands in its agent's directory by a rename, which sets that
// directory's time. An end the look did not see landed after the scan file
// was made, and its directory is at least as new as the stamp: the next
// look reads the directories again. That holds whatever wrote the spool
// (a supervisor still running an older teamkit, one killed a moment after)
// and however a look ended (killed part way: its scan file is no stamp).
//
// A supervisor that spools also takes the stamp away, and every look in
// progress with it (the scan files), before its file lands and again
// after: the directory's time is then not all that stands between an end
// and its record (a clock stepped back would defeat it alone).
const (
	nothingSpooled = ".nothing-spooled"
	scanPrefix     = ".spool-scan-"
	// staleScan is the age past which a look removes a scan file left by
	// a look that was killed part way.
	staleScan = time.Hour
)

// spooled is what a spool file holds: the exit code, and the run's record
// when the run started (the record holds no secret: what spawn runs shows).
type spooled struct {
	ExitCode int                `json:"exit_code"`
	Run      *mailbox.RunRecord `json:"run,omitempty"`
	// CrashedAt is set by a guard whose supervisor died: the run ended
	// crashed then, its exit code unknown (ExitCode is not one). Stopped
	// says the supervisor was stopped while giving an answer back, and
	// left the rest to the guard: the run ended stopped.
	CrashedAt *time.Time `json:"crashed_at,omitempty"`
	Stopped   bool       `json:"stopped,omitempty"`
	// Ask is set with CrashedAt for a run whose agent never started and
	// whose answer the guard could not give back: it is given back
	// (mailbox.DB.UnstartRun) before the end is recorded.
	Ask int64 `json:"ask,omitempty"`
}

// spool writes s to path, private, atomically: a reader sees the whole
// file or none (the temporary's name does not end in ".exit"). Before the
// file lands and again after, it takes away the team's stamp and every look
// in progress (see above); path is in the agent's run directory, inside the
// team's.
func spool(path string, s spooled) error {
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	_, err = f.Write(append(data, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	teamDir := filepath.Dir(filepath.Dir(path))
	if err == nil {
		unstamp(teamDir)
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	unstamp(teamDir)
	return nil
}

// unstamp removes the team's looks in progress, then its stamp. A removal
// that fails leaves the stamp to the directory times, which the spool file
// has just made newer than it.
func unstamp(teamDir string) {
	scans, _ := filepath.Glob(filepath.Join(teamDir, scanPrefix+"*"))
	for _, scan := range scans {
		os.Remove(scan)
	}
	os.Remove(filepath.Join(teamDir, nothingSpooled))
}

// SpoolPath is where a run's end waits when the supervisor could not
// record it: "<run>.exit" among the run's files in its agent's run directory.
func SpoolPath(runDir, run string) string { return filepath.Join(runDir, run+".exit") }

// RecordSpooled records every run end spooled under runsDir for team
// (runsDir/team/<agent>/<run>.exit): the run's record and the park its end
// implies, then the exit code, as the supervisor would have; it removes
// each file once recorded, and leaves one that cannot be recorded yet for
// the next try. An end for a run the agent's record no longer names changes
// only that run's record (SettleEnd and SetAgentState ignore older runs).
// A file holding only a number is an exit code spooled by an older teamkit.
// While the team's stamp holds (see above) there is nothing to record.
func RecordSpooled(ctx context.Context, db *mailbox.DB, runsDir, team string) {
	teamDir := filepath.Join(runsDir, team)
	if stampHolds(teamDir, agentDirs(teamDir)) {
		return
	}
	recordAll(ctx, db, team, teamDir)
}

// SpoolLook is RecordSpooled begun before the mailbox is open: the check
// of the team's stamp, which reads the time of every agent's run
// directory, runs alongside the open (LookSpooled), and Record finishes
// the look. spawn list of 200 agents waited 3% of its time for those
// reads, done one after the other before it read the roster.
type SpoolLook struct {
	team, teamDir string
	holds         chan bool
}

// LookSpooled starts the look for team's spooled ends under runsDir.
func LookSpooled(runsDir, team string) *SpoolLook {
	l := &SpoolLook{team: team, teamDir: filepath.Join(runsDir, team), holds: make(chan bool, 1)}
	go func() { l.holds <- stampHolds(l.teamDir, agentDirs(l.teamDir)) }()
	return l
}

// Record records what the look finds, as RecordSpooled does.
func (l *SpoolLook) Record(ctx context.Context, db *mailbox.DB) {
	if !<-l.holds {
		recordAll(ctx, db, l.team, l.teamDir)
	}
}

// recordAll is RecordSpooled's look once the stamp does not hold.
func recordAll(ctx context.Context, db *mailbox.DB, team, teamDir string) {
	// Without a directory to hold a scan file (none yet, or read-only)
	// the look goes on unstamped. The agents are listed after the scan
	// file is down, so that every directory the look does not read is newer
	// than the scan file.
	var scan string
	if f, err := os.CreateTemp(teamDir, scanPrefix+"*"); err == nil {
		scan = f.Name()
		f.Close()
	}
	agents := agentDirs(teamDir)
	// An agent's directory that cannot be read may hold an end: no stamp.
	left := agents == nil
	for _, e := range agents {
		dir := filepath.Join(teamDir, e.Name())
		files, err := os.ReadDir(dir)
		if err != nil {
			left = left || !errors.Is(err, fs.ErrNotExist)
			continue
		}
		for _, f := range files {
			if strings.HasSuffix(f.Name(), ".exit") && !f.IsDir() && !recordSpooled(ctx, db, team, filepath.Join(dir, f.Name())) {
				left = true
			}
		}
	}
	if scan == "" {
		return
	}
	if left || os.Rename(scan, stamp(teamDir)) != nil {
		os.Remove(scan)
	}
}

func stamp(teamDir string) string { return filepath.Join(teamDir, nothingSpooled) }

// agentDirs lists the agents' directories in the team's run directory:
// nil when it could not be read (other than for not existing), empty when
// there is none. Scan files left by looks killed part way are removed.
func agentDirs(teamDir string) []fs.DirEntry {
	entries, err := os.ReadDir(teamDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return []fs.DirEntry{}
		}
		return nil
	}
	agents := []fs.DirEntry{}
	for _, e := range entries {
		switch {
		case strings.HasPrefix(e.Name(), scanPrefix):
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > staleScan {
				os.Remove(filepath.Join(teamDir, e.Name()))
			}
		case e.IsDir():
			agents = append(agents, e)
		}
	}
	return agents
}

// stampHolds reports whether the team's stamp is there and older than
// every one of agents, its directories (agentDirs; nil: unreadable).
func stampHolds(teamDir string, agents []fs.DirEntry) bool {
	st, err := os.Lstat(stamp(teamDir))
	if err != nil || agents == nil {
		return false
	}
	for _, e := range agents {
		if info, err := e.Info(); err != nil || !info.ModTime().Before(st.ModTime()) {
			return false
		}
	}
	return true
}

// unreadableAfter is how old a spool file that holds neither an exit code
// nor a spooled end must be before a look sets it aside: a supervisor of an
// older teamkit wrote its file in place, and a look may read it half
// written.
const unreadableAfter = time.Minute

// setAside renames the spool file f, which holds no end a look can read
// (empty, cut short, not JSON), to f+".unreadable", where no look reads it
// again and a person still can, and reports whether it did. Left in place
// it would keep every look from stamping the team, so that each read every
// agent's directory again, for ever.
func setAside(f string) bool {
	info, err := os.Stat(f)
	if err != nil || time.Since(info.ModTime()) < unreadableAfter {
		return false
	}
	return os.Rename(f, f+".unreadable") == nil
}

// recordSpooled records the end spooled in file f and removes f, and
// reports whether it did.
func recordSpooled(ctx context.Context, db *mailbox.DB, team, f string) bool {
	data, err := os.ReadFile(f)
	if err != nil {
		return false
	}
	var s spooled
	if code, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
		s.ExitCode = code
	} else if json.Unmarshal(data, &s) != nil {
		return setAside(f)
	}
	name, run := filepath.Base(filepath.Dir(f)), strings.TrimSuffix(filepath.Base(f), ".exit")
	if s.CrashedAt != nil {
		end, detail := runstream.EndCrashed, guardDetail
		if s.Stopped {
			end, detail = runstream.EndStopped, guardStoppedDetail
		}
		if s.Ask != 0 && db.UnstartRun(ctx, s.Ask, run) != nil ||
			db.SetRunEnd(ctx, end, detail, mailbox.AgentRun{Team: team, Name: name, Run: run}) != nil ||
			db.SetRunEnded(ctx, team, run, *s.CrashedAt) != nil ||
			db.SetAgentState(ctx, team, name, run, mailbox.StateExited, 0, nil) != nil {
			return false
		}
		return os.Remove(f) == nil
	}
	if r := s.Run; r != nil {
		// A run that reached its budget while the mailbox was down files
		// its ask now, before its end is recorded: filed once per run, it
		// is never lost with the outage.
		if what, _, ok := strings.Cut(r.Detail, " reached: "); ok && r.End == runstream.EndBudget {
			if _, _, err := fileBudgetAsk(ctx, db, r.Team, r.Name, r.Run, what); err != nil {
				return false
			}
		}
		if db.RecordRun(ctx, *r) != nil || r.End != "" && db.SettleEnd(ctx, r.Team, r.Name, r.Run, r.End, r.ResetsAt) != nil {
			return false
		}
	}
	if db.SetAgentState(ctx, team, name, run, mailbox.StateExited, 0, &s.ExitCode) != nil {
		return false
	}
	return os.Remove(f) == nil
}
