package launch

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/teamkit/teamkit/pkg/mailbox"
)

// A run's end that the supervisor could not record (the mailbox out of
// reach past its retries) is spooled beside the run's files, and the next
// command that reads the roster on this host records it (RecordSpooled).
//
// spawn list, stale and resume look on every call, and looking reads every
// agent's run directory: a fifth of spawn list's time at 200 agents. So a
// look that found nothing left to record leaves a stamp in the team's run
// directory (nothingSpooled), and while it is there the next look is one
// stat. A supervisor that spools an end takes the stamp away, and with it
// every look in progress (scanPrefix), in that order:
//
//   - a look first puts down its own scan file, then reads the directories,
//     then renames its scan file to the stamp only if it recorded everything
//     it found;
//   - a supervisor first puts its spool file in place, then removes every
//     scan file, then the stamp.
//
// An end spooled before a look read the directories is seen by it; one
// spooled after finds that look's scan file and removes it, so its rename
// fails and no stamp says "nothing". A look killed part way leaves a scan
// file and no stamp: the next look reads the directories again.
const (
	nothingSpooled = ".nothing-spooled"
	scanPrefix     = ".spool-scan-"
)

// spooled is what a spool file holds: the exit code, and the run's record
// when the run started (the record holds no secret: what spawn runs shows).
type spooled struct {
	ExitCode int                `json:"exit_code"`
	Run      *mailbox.RunRecord `json:"run,omitempty"`
}

// spool writes s to path, private, atomically: a reader sees the whole
// file or none (the temporary's name does not end in ".exit"). Then it
// takes away the team's stamp and any look in progress (see above); path
// is in the agent's run directory, inside the team's.
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
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	teamDir := filepath.Dir(filepath.Dir(path))
	scans, _ := filepath.Glob(filepath.Join(teamDir, scanPrefix+"*"))
	for _, scan := range scans {
		os.Remove(scan)
	}
	if err := os.Remove(filepath.Join(teamDir, nothingSpooled)); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("spooled, but the stamp that hides it stays: %w", err)
	}
	return nil
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
// While the team's stamp says nothing is spooled, it only looks at that.
func RecordSpooled(ctx context.Context, db *mailbox.DB, runsDir, team string) {
	teamDir := filepath.Join(runsDir, team)
	stamp := filepath.Join(teamDir, nothingSpooled)
	if _, err := os.Lstat(stamp); err == nil {
		return
	}
	// Without a directory to hold a scan file (none yet, or read-only)
	// the look goes on unstamped.
	var scan string
	if f, err := os.CreateTemp(teamDir, scanPrefix+"*"); err == nil {
		scan = f.Name()
		f.Close()
	}
	left := false
	files, _ := filepath.Glob(filepath.Join(teamDir, "*", "*.exit"))
	for _, f := range files {
		if !recordSpooled(ctx, db, team, f) {
			left = true
		}
	}
	if scan == "" {
		return
	}
	if left || os.Rename(scan, stamp) != nil {
		os.Remove(scan)
	}
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
		return false
	}
	name, run := filepath.Base(filepath.Dir(f)), strings.TrimSuffix(filepath.Base(f), ".exit")
	if r := s.Run; r != nil {
		if db.RecordRun(ctx, *r) != nil || r.End != "" && db.SettleEnd(ctx, r.Team, r.Name, r.Run, r.End, r.ResetsAt) != nil {
			return false
		}
	}
	if db.SetAgentState(ctx, team, name, run, mailbox.StateExited, 0, &s.ExitCode) != nil {
		return false
	}
	return os.Remove(f) == nil
}
