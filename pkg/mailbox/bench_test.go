package mailbox_test

// Benchmarks of the store in-process. scripts/bench.sh times the commands as
// whole processes; docs/BENCHMARKS.md has the figures.
//
//	go test -run '^$' -bench . -benchtime 2000x ./pkg/mailbox/

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/teamkit/teamkit/internal/mailboxtest"
	"github.com/teamkit/teamkit/internal/pgtest"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

// benchDB is a mailbox of n messages for team crew, built once per run.
type benchDB struct {
	once sync.Once
	path string
	err  error
}

var (
	benchDir  string
	benchDirM sync.Mutex
	benchDBs  = map[int]*benchDB{}
)

// sizedDB returns the path of a mailbox with n messages, building it on
// first use in this run.
func sizedDB(b *testing.B, n int) string {
	b.Helper()
	benchDirM.Lock()
	if benchDir == "" {
		var err error
		if benchDir, err = os.MkdirTemp("", "teamkit-bench-"); err != nil {
			benchDirM.Unlock()
			b.Fatal(err)
		}
	}
	d := benchDBs[n]
	if d == nil {
		d = &benchDB{path: filepath.Join(benchDir, fmt.Sprintf("mailbox-%d.db", n))}
		benchDBs[n] = d
	}
	benchDirM.Unlock()
	d.once.Do(func() {
		start := time.Now()
		db, err := mailbox.Open(context.Background(), d.path, mailbox.Options{})
		if err != nil {
			d.err = err
			return
		}
		db.Close()
		r, err := sql.Open("sqlite", "file:"+d.path+"?_journal_mode=WAL")
		if err != nil {
			d.err = err
			return
		}
		defer r.Close()
		if d.err = mailboxtest.Fill(r, n); d.err != nil {
			return
		}
		_, d.err = r.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
		b.Logf("built a %d-message mailbox in %v", n, time.Since(start).Round(time.Millisecond))
	})
	if d.err != nil {
		b.Fatalf("build %d-message mailbox: %v", n, d.err)
	}
	return d.path
}

func openBench(b *testing.B, path string) *mailbox.DB {
	b.Helper()
	db, err := mailbox.Open(context.Background(), path, mailbox.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

var sizes = []struct {
	name string
	n    int
}{{"1k", 1_000}, {"1M", 1_000_000}}

func BenchmarkSend(b *testing.B) {
	db := openBench(b, filepath.Join(b.TempDir(), "t.db"))
	ctx := context.Background()
	msg := mailbox.Message{Team: "crew", From: "boss", To: "w", Body: "Task: implement the next item on the list, run the tests, report back."}
	for b.Loop() {
		if _, err := db.Send(ctx, msg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPostgresSend sends on PostgreSQL from one goroutine, and from
// eight side by side to one team and to eight teams: the sends to one team
// take their ids in turn (sendLock).
func BenchmarkPostgresSend(b *testing.B) {
	db := openBench(b, pgtest.URL(b))
	ctx := context.Background()
	msg := mailbox.Message{Team: "crew", From: "boss", To: "w", Body: "Task: implement the next item on the list, run the tests, report back."}
	b.Run("serial", func(b *testing.B) {
		for b.Loop() {
			if _, err := db.Send(ctx, msg); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, teams := range []int{1, 8} {
		b.Run(fmt.Sprintf("8x%dteams", teams), func(b *testing.B) {
			var next atomic.Int64
			b.SetParallelism(4) // 4 × GOMAXPROCS (2 here): 8 senders
			b.RunParallel(func(pb *testing.PB) {
				m := msg
				m.Team = fmt.Sprintf("crew%d", next.Add(1)%int64(teams))
				for pb.Next() {
					if _, err := db.Send(ctx, m); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkPostgresDrain drains one message (sent outside the timing), and
// an empty inbox, on PostgreSQL: on this host, and through a proxy that
// holds each chunk it forwards, either way, for half a millisecond (or
// more: a sleep's overshoot), as hosts farther apart see each other. There
// each round trip a drain takes shows whole: an empty drain is one.
func BenchmarkPostgresDrain(b *testing.B) {
	u := pgtest.URL(b)
	msg := mailbox.Message{Team: "crew", From: "boss", To: "w", Body: "Task: implement the next item on the list, run the tests, report back."}
	none := func([]mailbox.Message) error { return nil }
	for _, via := range []struct {
		name string
		url  string
	}{
		{"local", u},
		{"held", pgProxy(b, u, func(net.Conn, []byte, bool) bool { time.Sleep(500 * time.Microsecond); return true })},
	} {
		db := openBench(b, via.url)
		ctx := context.Background()
		b.Run("one/"+via.name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				if _, err := db.Send(ctx, msg); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if got, err := db.Drain(ctx, "crew", "w", 0, none); err != nil || len(got) != 1 {
					b.Fatalf("Drain = %d messages, %v", len(got), err)
				}
			}
		})
		b.Run("empty/"+via.name, func(b *testing.B) {
			for b.Loop() {
				if got, err := db.Drain(ctx, "crew", "w", 0, none); err != nil || len(got) != 0 {
					b.Fatalf("Drain = %d messages, %v", len(got), err)
				}
			}
		})
		// An agent's turn: 'inbox' on an empty inbox, less the process
		// (as BenchmarkEmptyDrain), its connection made anew.
		b.Run("turn/"+via.name, func(b *testing.B) {
			for b.Loop() {
				db, err := mailbox.Open(ctx, via.url, mailbox.Options{})
				if err != nil {
					b.Fatal(err)
				}
				if got, err := db.Drain(ctx, "crew", "w", 0, none); err != nil || len(got) != 0 {
					b.Fatalf("Drain = %d messages, %v", len(got), err)
				}
				if known, err := db.TeamKnown(ctx, "crew"); err != nil || !known {
					b.Fatalf("TeamKnown: %v, %v", known, err)
				}
				db.Close()
			}
		})
	}
}

func BenchmarkDrainOne(b *testing.B) {
	db := openBench(b, filepath.Join(b.TempDir(), "t.db"))
	ctx := context.Background()
	msg := mailbox.Message{Team: "crew", From: "boss", To: "w", Body: "Task: implement the next item on the list, run the tests, report back."}
	for b.Loop() {
		if _, err := db.Send(ctx, msg); err != nil {
			b.Fatal(err)
		}
		got, err := db.Drain(ctx, "crew", "w", 0, func([]mailbox.Message) error { return nil })
		if err != nil || len(got) != 1 {
			b.Fatalf("Drain = %d messages, %v", len(got), err)
		}
	}
}

// BenchmarkStale is "stale crew --min 10" without the process: every unread
// message is a month old, so each call returns the ~300 unread of the 1k or
// the 1M mailbox.
// BenchmarkEmptyDrain is an agent's 'inbox' on an empty inbox, less the
// process: open the mailbox, drain nothing, ask whether the team is known
// (the note an empty drain prints for a typo), close.
func BenchmarkEmptyDrain(b *testing.B) {
	path := sizedDB(b, 1_000)
	ctx := context.Background()
	none := func([]mailbox.Message) error { return nil }
	for b.Loop() {
		db, err := mailbox.Open(ctx, path, mailbox.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if msgs, err := db.Drain(ctx, "crew", "nobody", 0, none); err != nil || len(msgs) != 0 {
			b.Fatalf("Drain: %v, %v", msgs, err)
		}
		if known, err := db.TeamKnown(ctx, "crew"); err != nil || !known {
			b.Fatalf("TeamKnown: %v, %v", known, err)
		}
		db.Close()
	}
}

func BenchmarkStale(b *testing.B) {
	for _, s := range sizes {
		b.Run(s.name, func(b *testing.B) {
			db := openBench(b, sizedDB(b, s.n))
			ctx := context.Background()
			cutoff := time.Now().Add(-10 * time.Minute)
			var n int
			for b.Loop() {
				got, err := db.Stale(ctx, "crew", "", cutoff)
				if err != nil {
					b.Fatal(err)
				}
				n = len(got)
			}
			if n < 250 || n > 400 {
				b.Fatalf("Stale returned %d messages, want about 300", n)
			}
			b.ReportMetric(float64(n), "msgs/op")
		})
	}
}

// benchDrainAt drains one message per iteration for "drainer", who has a
// tenth of the mailbox as read history; the b.N messages are queued
// beforehand, untimed.
func benchDrainAt(b *testing.B, n int) {
	path := sizedDB(b, n)
	db := openBench(b, path)
	ctx := context.Background()
	r, err := sql.Open("sqlite", "file:"+path+"?_busy_timeout=10000")
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	_, err = r.Exec(`INSERT INTO messages (team, sender, recipient, body, created_at)
		WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		SELECT 'crew', 'boss', 'drainer', 'queued ' || i, ? FROM n`, b.N, time.Now().UnixNano())
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		got, err := db.Drain(ctx, "crew", "drainer", 1, func([]mailbox.Message) error { return nil })
		if err != nil || len(got) != 1 {
			b.Fatalf("Drain = %d messages, %v", len(got), err)
		}
	}
}

func BenchmarkDrainAt1k(b *testing.B) { benchDrainAt(b, 1_000) }

func BenchmarkDrainAt1M(b *testing.B) { benchDrainAt(b, 1_000_000) }

// BenchmarkTeam is the roster spawn list reads (AgentsWithoutTasks) for a
// team of 1 agent and of 200, each with a run's full record: the figure per
// agent is what a fleet adds to a listing before any liveness check.
func BenchmarkTeam(b *testing.B) {
	for _, n := range []int{1, 200} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			db := openBench(b, filepath.Join(b.TempDir(), "t.db"))
			ctx := context.Background()
			for i := range n {
				a := mailbox.Agent{Team: "fleet", Name: fmt.Sprintf("a%d", i), Type: "claude", Task: "a task of some length",
					Run: fmt.Sprintf("20261205T050706Z-%08x", i), PID: 20000 + i, State: mailbox.StateRunning,
					Log:  fmt.Sprintf("/home/u/.local/state/teamkit/runs/fleet/a%d/20261205T050706Z-%08x.log", i, i),
					Host: "build-1", PIDStart: uint64(1_000_000 + i), BootID: "9f1c2d3e-4b5a-6978-8a9b-0c1d2e3f4a5b"}
				if err := db.RecordLaunch(ctx, a); err != nil {
					b.Fatal(err)
				}
				if err := db.Heartbeat(ctx, a.Team, a.Name, a.Run, 0); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				if got, err := db.AgentsWithoutTasks(ctx, "fleet"); err != nil || len(got) != n {
					b.Fatalf("AgentsWithoutTasks: %d agents, %v", len(got), err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/agent")
		})
	}
}
