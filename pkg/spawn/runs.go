package spawn

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/teamkit/teamkit/pkg/mailbox"
)

// RunsDir is where the run files (briefings, logs, launch specs) of the
// mailbox at dbPath live: beside the mailbox, in "<db>-runs/", as its lock
// files live in "<db>-locks/". Run files follow their mailbox, so two
// mailboxes (a temporary TEAMKIT_DB, say) never mix their briefings and
// logs, whatever XDG_STATE_HOME says. A mailbox that is not a file (a
// database URL) gets a directory of its own under stateDir/runs, named by a
// hash of the URL.
func RunsDir(stateDir, dbPath string) string {
	if strings.Contains(dbPath, "://") {
		sum := sha256.Sum256([]byte(dbPath))
		return filepath.Join(stateDir, "runs", hex.EncodeToString(sum[:8]))
	}
	return dbPath + "-runs"
}

// AgentRunDir holds the run files of one agent.
func AgentRunDir(runsDir, team, name string) string {
	return filepath.Join(runsDir, team, name)
}

// Runs lists the runs of one agent launched from this host into runsDir
// (each leaves its files there), by run id.
func Runs(runsDir, team, name string) []string {
	entries, _ := os.ReadDir(AgentRunDir(runsDir, team, name))
	var out []string
	for _, e := range entries {
		run, _, ok := strings.Cut(e.Name(), ".")
		if ok && !e.IsDir() && (len(out) == 0 || out[len(out)-1] != run) {
			out = append(out, run)
		}
	}
	return out
}

// OldRunFiles lists the run files of agent a that are older than cutoff:
// every file of an earlier run last written before cutoff, and those of the
// current run too once the agent has exited (or failed to start) before
// cutoff. A live agent's current run is never listed.
func OldRunFiles(runsDir string, a mailbox.Agent, cutoff time.Time) ([]string, error) {
	dir := AgentRunDir(runsDir, a.Team, a.Name)
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ended := (a.State == mailbox.StateExited || a.State == mailbox.StateFailed) && a.UpdatedAt.Before(cutoff)
	byRun := map[string][]string{}
	newest := map[string]time.Time{}
	for _, e := range entries {
		run, _, ok := strings.Cut(e.Name(), ".")
		if !ok || e.IsDir() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		byRun[run] = append(byRun[run], filepath.Join(dir, e.Name()))
		if info.ModTime().After(newest[run]) {
			newest[run] = info.ModTime()
		}
	}
	var out []string
	for run, files := range byRun {
		if run == a.Run && !ended {
			continue
		}
		if newest[run].Before(cutoff) {
			out = append(out, files...)
		}
	}
	sort.Strings(out)
	return out, nil
}
