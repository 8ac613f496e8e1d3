package mailbox

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Run files are what spawn leaves for each run of an agent on the host
// that launched it: the briefing, the log, the launch spec. Where they live
// is the mailbox's to say, as where its lock files live is, so that every
// command (spawn writes them; inbox prune removes them; stale, spawn list
// and stop read them) finds them from the mailbox's location alone.

// RunsDir is where the run files of the mailbox at db (a --db or
// TEAMKIT_DB value) live: beside the mailbox as named, in "<db>-runs/" (a
// relative path is made absolute first); its lock files are in
// "<db>-locks/" beside the file itself, a link's target (DB.file).
// Run files follow their mailbox, so two mailboxes (a temporary
// TEAMKIT_DB, say) never mix their briefings and logs, whatever
// XDG_STATE_HOME says. A mailbox that is not a file (a database URL) gets
// a directory of its own under stateDir/runs (stateDir is teamkit's state
// directory), named by a hash of the URL without its password: a password
// changed does not move the run files, and no name is derived from it. A
// mailbox whose directory was named while the hash took the whole URL
// keeps that directory.
func RunsDir(stateDir, db string) string {
	if IsURL(db) {
		named := func(s string) string {
			sum := sha256.Sum256([]byte(s))
			return filepath.Join(stateDir, "runs", hex.EncodeToString(sum[:8]))
		}
		bare := withoutPassword(db)
		if bare != db {
			if old := named(db); dirExists(old) {
				return old
			}
		}
		return named(bare)
	}
	if abs, err := filepath.Abs(db); err == nil {
		db = abs
	}
	return db + "-runs"
}

// withoutPassword is the database URL u with no password in it, in its
// user part or its query (libpq's password parameter); u as it is, byte
// for byte, when it holds none or does not parse.
func withoutPassword(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	_, inUser := p.User.Password()
	q := p.Query()
	if !inUser && !q.Has("password") {
		return u
	}
	if inUser {
		p.User = url.User(p.User.Username())
	}
	if q.Has("password") {
		q.Del("password")
		p.RawQuery = q.Encode()
	}
	return p.String()
}

func dirExists(dir string) bool {
	st, err := os.Stat(dir)
	return err == nil && st.IsDir()
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
func OldRunFiles(runsDir string, a Agent, cutoff time.Time) ([]string, error) {
	dir := AgentRunDir(runsDir, a.Team, a.Name)
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ended := (a.State == StateExited || a.State == StateFailed) && a.UpdatedAt.Before(cutoff)
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
