package mailbox_test

// Concurrency and crash tests with real OS processes: the inbox binary is
// built once and run many times at once against one database file, the way
// a team of agents and a dispatcher use it.

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/teamkit/teamkit/internal/pgtest"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

var (
	buildOnce sync.Once
	binDir    string
	inboxPath string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := pgtest.Run(m)
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// moduleRoot is the directory holding go.mod.
func moduleRoot(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		t.Fatal("not inside a Go module")
	}
	return filepath.Dir(mod)
}

// inboxBinary builds cmd/inbox once per test binary run, with
// teamkit-postgres beside it (as go install puts them), which inbox runs
// for a postgres:// mailbox.
func inboxBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		root := moduleRoot(t)
		binDir, buildErr = os.MkdirTemp("", "teamkit-bin-")
		if buildErr != nil {
			return
		}
		inboxPath = filepath.Join(binDir, "inbox")
		cmd := exec.Command("go", "build", "-o", binDir+string(filepath.Separator), "./cmd/inbox", "./cmd/teamkit-postgres")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/inbox ./cmd/teamkit-postgres: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return inboxPath
}

// procEnv is the environment of the inbox processes: this one's, without a
// team identity, with the database and a generous busy timeout.
func procEnv(db string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TEAMKIT_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "TEAMKIT_DB="+db, "TEAMKIT_BUSY_TIMEOUT=30s")
}

// seed creates the mailbox at path and bulk-inserts n messages for crew/w in
// one statement; it returns their ids.
func seed(t *testing.T, path string, n int) []int64 {
	t.Helper()
	db, err := mailbox.Open(context.Background(), path, mailbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	r := raw(t, path)
	_, err = r.Exec(`INSERT INTO messages (team, sender, recipient, body, created_at)
		WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		SELECT 'crew', 'seed', 'w', 'seed message ' || i, ? FROM n`, n, time.Now().UnixNano())
	if err != nil {
		t.Fatalf("seed: %v", err)
	}
	rows, err := r.Query(`SELECT id FROM messages ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		rows.Scan(&id)
		ids = append(ids, id)
	}
	if len(ids) != n {
		t.Fatalf("seeded %d messages, want %d", len(ids), n)
	}
	return ids
}

// sender runs "inbox send crew w BODY" n times and returns the printed ids.
func sender(t *testing.T, bin string, env []string, tag string, n int) []int64 {
	var ids []int64
	for i := 0; i < n; i++ {
		cmd := exec.Command(bin, "send", "crew", "w", fmt.Sprintf("%s message %d", tag, i), "--from", tag)
		cmd.Env = env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Errorf("inbox send: %v: %s", err, stderr.String())
			return ids
		}
		s := strings.TrimSpace(string(out))
		id, err := strconv.ParseInt(strings.TrimPrefix(s, "id="), 10, 64)
		if err != nil || !strings.HasPrefix(s, "id=") {
			t.Errorf("inbox send printed %q, want id=N", s)
			return ids
		}
		ids = append(ids, id)
	}
	return ids
}

// parseDrain returns the ids of the complete JSON lines of a drain's output.
// A process killed mid-write can leave a partial last line; its message was
// never marked read, so ignoring it loses nothing.
func parseDrain(out []byte, killed bool) ([]int64, error) {
	var ids []int64
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	complete := bytes.HasSuffix(out, []byte("\n"))
	var lines [][]byte
	for sc.Scan() {
		lines = append(lines, append([]byte(nil), sc.Bytes()...))
	}
	if !complete && len(lines) > 0 {
		if !killed {
			return nil, fmt.Errorf("output of a clean run ends mid-line: %q", lines[len(lines)-1])
		}
		lines = lines[:len(lines)-1]
	}
	for _, l := range lines {
		var m struct {
			ID   int64  `json:"id"`
			Team string `json:"team"`
			To   string `json:"to"`
		}
		if err := json.Unmarshal(l, &m); err != nil || m.ID == 0 || m.Team != "crew" || m.To != "w" {
			return nil, fmt.Errorf("bad drain line %q: %v", l, err)
		}
		ids = append(ids, m.ID)
	}
	return ids, nil
}

func unread(t *testing.T, path string) int {
	return count(t, raw(t, path), `SELECT count(*) FROM messages WHERE read_at IS NULL`)
}

// 8 drain processes at a time empty 10,000 messages while two senders add
// 300 more, one process a message: every message is delivered exactly
// once. The race is the drainers' (some 200 claims of 50 against each
// other); the sends keep the backlog moving under them, which 300 do as
// well as 1,000, at under half the test's CPU.
func TestConcurrentDrainExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns hundreds of processes")
	}
	const (
		seeded   = 10000
		drainers = 8
		senders  = 2
		perSend  = 150
	)
	bin := inboxBinary(t)
	path := filepath.Join(t.TempDir(), "teamkit.db")
	want := seed(t, path, seeded)
	env := procEnv(path)

	var sendersDone atomic.Bool
	work := &backlog{db: raw(t, path), done: &sendersDone}
	var mu sync.Mutex
	seen := map[int64]int{}
	var sentIDs []int64
	var drains atomic.Int64

	var sendWG, drainWG sync.WaitGroup
	for s := 0; s < senders; s++ {
		sendWG.Add(1)
		go func() {
			defer sendWG.Done()
			ids := sender(t, bin, env, fmt.Sprintf("sender%d", s), perSend)
			mu.Lock()
			sentIDs = append(sentIDs, ids...)
			mu.Unlock()
		}()
	}
	go func() { sendWG.Wait(); sendersDone.Store(true) }()

	for d := 0; d < drainers; d++ {
		drainWG.Add(1)
		go func() {
			defer drainWG.Done()
			for !t.Failed() {
				// Read before the run: an empty drain that started after the
				// last send finished means the inbox is empty for good.
				final := sendersDone.Load()
				cmd := exec.Command(bin, "drain", "crew", "w", "--json", "--limit", "50")
				cmd.Env = env
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					t.Errorf("inbox drain: %v: %s", err, stderr.String())
					return
				}
				drains.Add(1)
				ids, err := parseDrain(out, false)
				if err != nil {
					t.Error(err)
					return
				}
				if len(ids) > 50 {
					t.Errorf("drain --limit 50 printed %d messages", len(ids))
				}
				mu.Lock()
				for _, id := range ids {
					seen[id]++
				}
				mu.Unlock()
				if len(ids) == 0 {
					if final {
						return
					}
					work.wait(t, 100)
				}
			}
		}()
	}
	sendWG.Wait()
	drainWG.Wait()
	if t.Failed() {
		return
	}

	want = append(want, sentIDs...)
	if len(want) != seeded+senders*perSend {
		t.Fatalf("%d messages sent, want %d", len(want), seeded+senders*perSend)
	}
	var lost, twice []int64
	for _, id := range want {
		switch seen[id] {
		case 0:
			lost = append(lost, id)
		case 1:
		default:
			twice = append(twice, id)
		}
		delete(seen, id)
	}
	if len(lost) > 0 || len(twice) > 0 || len(seen) > 0 {
		t.Fatalf("%d lost (e.g. %v), %d delivered more than once (e.g. %v), %d unknown ids delivered",
			len(lost), head(lost), len(twice), head(twice), len(seen))
	}
	if n := unread(t, path); n != 0 {
		t.Fatalf("%d messages still unread", n)
	}
	t.Logf("%d messages delivered exactly once by %d drain processes", len(want), drains.Load())
}

// backlog lets an idle drainer wait, polling in-process, until there is a
// batch worth a process (or the senders are done) instead of launching an
// empty drain after every single send: process start-up, not SQLite, is
// what a drain costs, and 8 spinning drainers would starve the senders of
// CPU. One waiting drainer is let go per batch (per oldest unread id); the
// seeded backlog is where all 8 drainers race for the same messages.
type backlog struct {
	db       *sql.DB
	done     *atomic.Bool
	mu       sync.Mutex
	released int64 // oldest unread id when a waiting drainer was last let go
}

func (b *backlog) wait(t *testing.T, batch int) {
	for !b.done.Load() && !t.Failed() {
		var n int
		var oldest sql.NullInt64
		err := b.db.QueryRow(`SELECT count(*), min(id) FROM (SELECT id FROM messages INDEXED BY messages_unread_by_recipient
			 WHERE team = 'crew' AND recipient = 'w' AND read_at IS NULL ORDER BY id LIMIT ?) AS unread`, batch).Scan(&n, &oldest)
		if err != nil {
			t.Errorf("poll backlog: %v", err)
			return
		}
		if n >= batch {
			b.mu.Lock()
			if oldest.Int64 != b.released {
				b.released = oldest.Int64
				b.mu.Unlock()
				return
			}
			b.mu.Unlock()
		}
		time.Sleep(20 * time.Millisecond) // poll interval
	}
}

// tapWriter collects a process's stdout and calls onFirst on its first
// write.
type tapWriter struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	onFirst func()
	fired   bool
}

func (w *tapWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if w.onFirst != nil && !w.fired {
		w.fired = true
		w.onFirst()
	}
	return len(p), nil
}

func (w *tapWriter) Bytes() []byte { w.mu.Lock(); defer w.mu.Unlock(); return w.buf.Bytes() }

func head(ids []int64) []int64 { return ids[:min(len(ids), 5)] }

// crashLease is the drains' lease in TestCrashedDrainNeverLoses: what a
// killed drain's messages wait before they are delivered again.
const crashLease = "3s"

func TestCrashedDrainNeverLoses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns and kills hundreds of processes")
	}
	path := filepath.Join(t.TempDir(), "teamkit.db")
	crashedDrains(t, path, [][]string{procEnv(path)}, crashLoad{seeded: 2000, drainers: 4, perSend: 100, kills: 36, limit: 25})
}

// crashLoad is how hard crashedDrains pushes: drainers processes, each
// draining limit at a time, empty seeded messages while one sender adds
// perSend more, and kills of the drains are SIGKILLed.
type crashLoad struct{ seeded, drainers, perSend, kills, limit int }

// crashedDrains runs l against the mailbox at path, drainer d with
// environment envs[d%len(envs)] (its host; the sender runs on the first),
// and checks that no message is lost, none is delivered twice by drains
// that were not killed, and everything ends read.
func crashedDrains(t *testing.T, path string, envs [][]string, l crashLoad) {
	seeded, drainers, perSend, kills := l.seeded, l.drainers, l.perSend, l.kills
	limit := strconv.Itoa(l.limit)
	bin := inboxBinary(t)
	want := seed(t, path, seeded)
	env := envs[0]

	var sendersDone atomic.Bool
	work := &backlog{db: raw(t, path), done: &sendersDone}
	var killsLeft atomic.Int64
	killsLeft.Store(int64(kills))
	var mu sync.Mutex
	clean := map[int64]int{}  // deliveries by drains that exited normally
	killed := map[int64]int{} // deliveries by drains that were SIGKILLed
	var sentIDs []int64
	var killedRuns, cleanRuns, killedMidBatch int

	var sendWG, drainWG sync.WaitGroup
	sendWG.Add(1)
	go func() {
		defer sendWG.Done()
		ids := sender(t, bin, env, "sender", perSend)
		mu.Lock()
		sentIDs = ids
		mu.Unlock()
	}()
	go func() { sendWG.Wait(); sendersDone.Store(true) }()

	for d := 0; d < drainers; d++ {
		drainWG.Add(1)
		go func() {
			defer drainWG.Done()
			for !t.Failed() {
				final := sendersDone.Load() && killsLeft.Load() <= 0
				// A killed drain's lease must run out within the test;
				// a clean one finishes far inside it.
				cmd := exec.Command(bin, "drain", "crew", "w", "--json", "--limit", limit, "--lease", crashLease)
				cmd.Env = envs[d%len(envs)]
				stdout := &tapWriter{}
				var stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = stdout, &stderr
				kill := func() { cmd.Process.Signal(syscall.SIGKILL) }
				var timer *time.Timer
				armed := rand.IntN(2) == 0 && killsLeft.Add(-1) >= 0
				if armed && rand.IntN(2) == 0 {
					// As soon as it starts printing: between the output
					// and the read mark, where a crash must repeat, not lose.
					stdout.onFirst = kill
				}
				if err := cmd.Start(); err != nil {
					t.Error(err)
					return
				}
				if armed && stdout.onFirst == nil {
					// At a random moment: starting up, opening the
					// database, waiting for the lock, printing, committing.
					timer = time.AfterFunc(time.Duration(rand.IntN(100_000))*time.Microsecond, kill)
				}
				err := cmd.Wait()
				if timer != nil {
					timer.Stop()
				}
				ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
				wasKilled := ws.Signaled() && ws.Signal() == syscall.SIGKILL
				if armed && !wasKilled {
					killsLeft.Add(1) // it finished first: not a kill
				}
				if err != nil && !wasKilled {
					t.Errorf("inbox drain: %v: %s", err, stderr.String())
					return
				}
				ids, perr := parseDrain(stdout.Bytes(), wasKilled)
				if perr != nil {
					t.Error(perr)
					return
				}
				mu.Lock()
				into := clean
				if wasKilled {
					into = killed
					killedRuns++
					if len(ids) > 0 {
						killedMidBatch++
					}
				} else {
					cleanRuns++
				}
				for _, id := range ids {
					into[id]++
				}
				mu.Unlock()
				if len(ids) == 0 && !wasKilled {
					if final {
						return
					}
					work.wait(t, l.limit)
				}
			}
		}()
	}
	sendWG.Wait()
	drainWG.Wait()
	if t.Failed() {
		return
	}

	// Whatever is left: the messages of the last killed drains come back
	// as their leases run out (--wait sees them on its safety poll).
	drainRest(t, bin, path, clean, "--lease", crashLease)

	want = append(want, sentIDs...)
	if len(want) != seeded+perSend {
		t.Fatalf("%d messages sent, want %d", len(want), seeded+perSend)
	}
	if killedRuns < kills/2 {
		t.Fatalf("only %d drains were killed mid-run; the test did not exercise crashes", killedRuns)
	}
	var lost, doubled []int64
	repeats := 0
	for _, id := range want {
		c, k := clean[id], killed[id]
		if c+k == 0 {
			lost = append(lost, id)
		}
		// Only a killed drain may have printed a message without marking it
		// read; drains that finished never repeat each other.
		if c > 1 {
			doubled = append(doubled, id)
		}
		if c+k > 1 {
			repeats += c + k - 1
		}
		delete(clean, id)
		delete(killed, id)
	}
	if len(lost) > 0 || len(doubled) > 0 || len(clean)+len(killed) > 0 {
		t.Fatalf("%d lost (e.g. %v), %d delivered twice by drains that were not killed (e.g. %v), %d unknown ids",
			len(lost), head(lost), len(doubled), head(doubled), len(clean)+len(killed))
	}
	if n := unread(t, path); n != 0 {
		t.Fatalf("%d messages still unread at the end", n)
	}
	t.Logf("%d messages, %d clean drains, %d killed drains (%d after printing part or all of a batch), %d repeated deliveries (all after a kill)",
		len(want), cleanRuns, killedRuns, killedMidBatch, repeats)
}

// drainRest drains crew/w of path with the inbox binary bin until nothing
// is unread (each drain waiting out leases for up to a minute), counting
// each message's deliveries in seen.
func drainRest(t *testing.T, bin, path string, seen map[int64]int, args ...string) {
	t.Helper()
	for unread(t, path) > 0 {
		out, err := exec.Command(bin, append([]string{"drain", "crew", "w", "--json", "--db", path, "--wait", "1m"}, args...)...).Output()
		if err != nil {
			t.Fatalf("drain what is left: %v", err)
		}
		ids, err := parseDrain(out, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			seen[id]++
		}
	}
}
