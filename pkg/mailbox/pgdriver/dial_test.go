package pgdriver_test

import (
	"context"
	"database/sql"
	"os"
	"testing"
	"time"

	"github.com/teamkit/teamkit/internal/netcut"
	"github.com/teamkit/teamkit/internal/pgtest"
	"github.com/teamkit/teamkit/pkg/mailbox"
	"github.com/teamkit/teamkit/pkg/mailbox/pgdriver"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// open is the mailbox's connector on url, with one connection.
func open(t *testing.T, url string) *sql.DB {
	t.Helper()
	db, err := pgdriver.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	return db
}

// conn is a connection of the mailbox's connector on url, held out of the
// pool: the one a test cuts. A pooled one idle over a second is pinged
// before its next statement (rebindConn.ResetSession), and the ping lost,
// the statement would run on a fresh connection the cut does not reach.
// (Not closed: Close waits for a statement the test left hung; db.Close
// does not.)
func conn(t *testing.T, url string) *sql.Conn {
	t.Helper()
	c, err := open(t, url).Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ports are c's two ends' ports, the client's and the server's, as the
// server saw them: what netcut.Silence cuts.
func ports(t *testing.T, c *sql.Conn) (client, server int) {
	t.Helper()
	if err := c.QueryRowContext(context.Background(), `SELECT inet_client_port(), inet_server_port()`).Scan(&client, &server); err != nil {
		t.Fatal(err)
	}
	return client, server
}

// within runs f and fails the test if it has not returned by limit (f is
// left running: a hung statement is the defect).
func within(t *testing.T, limit time.Duration, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("still waiting after %v", limit)
		return nil
	}
}

// The server's probing of the session, unless the URL sets its own or,
// set empty, asks for the server's: a server that kept a vanished idle
// client's session (and its locks) for two hours now lets it go in about a
// minute. No tcp_user_timeout is sent (the server's default stays).
func TestServerLimits(t *testing.T) {
	url := pgtest.URL(t)
	setting := func(db *sql.DB) (got [3]string) {
		t.Helper()
		err := db.QueryRow(`SELECT current_setting('tcp_keepalives_idle'), current_setting('tcp_keepalives_interval'),
			current_setting('tcp_user_timeout')`).Scan(&got[0], &got[1], &got[2])
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	plain, err := sql.Open("pgx", url) // pgx's own connector: the server's defaults
	if err != nil {
		t.Fatal(err)
	}
	def := setting(plain)
	for _, c := range []struct {
		query string
		want  [3]string
	}{
		{"", [3]string{"10", "5", def[2]}},
		{"&tcp_keepalives_idle=60", [3]string{"60", "5", def[2]}},
		{"&tcp_keepalives_idle=&tcp_keepalives_interval=", def},
	} {
		db, err := pgdriver.Open(url + c.query)
		if err != nil {
			t.Fatal(err)
		}
		if got := setting(db); got != c.want {
			t.Errorf("URL …%s: tcp_keepalives_idle, _interval, tcp_user_timeout = %v; want %v", c.query, got, c.want)
		}
	}
}

// A statement sent into a network gone silent: its bytes are never
// acknowledged, and TCP's retransmissions alone would go on for about 15
// minutes. The user timeout ends it (2 s here), as a lost connection.
func TestSilentWhileSending(t *testing.T) {
	pgdriver.QuickSilence(t)
	c := conn(t, pgtest.URL(t))
	client, server := ports(t, c)
	netcut.Silence(t, client, server)
	err := within(t, time.Minute, func() error {
		_, err := c.ExecContext(context.Background(), `SELECT 1`)
		return err
	})
	if err == nil || !mailbox.Disconnected(err) {
		t.Fatalf("err = %v; want a lost connection", err)
	}
}

// The network goes silent while the server works on a statement: nothing
// of the client's is unacknowledged, so only keepalive notices, which Go
// left at 15 s and nine probes, 2.5 minutes. (The statement outlasts the
// test, so that its answer can never beat the cut however slow the
// machine.)
func TestSilentWhileWaiting(t *testing.T) {
	pgdriver.QuickSilence(t)
	url := pgtest.URL(t)
	c := conn(t, url)
	port, server := ports(t, c)
	watch := open(t, url)
	done := make(chan error, 1)
	go func() {
		_, err := c.ExecContext(context.Background(), `SELECT pg_sleep(300)`)
		done <- err
	}()
	// Cut once the server has the statement.
	for deadline := time.Now().Add(time.Minute); ; {
		var n int
		if err := watch.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE client_port = $1 AND query = 'SELECT pg_sleep(300)' AND state = 'active'`, port).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server never ran the statement")
		}
		time.Sleep(5 * time.Millisecond)
	}
	netcut.Silence(t, port, server)
	err := within(t, time.Minute, func() error { return <-done })
	if err == nil || !mailbox.Disconnected(err) {
		t.Fatalf("err = %v; want a lost connection", err)
	}
}

// A client that vanishes holding a lock (its host gone from the network)
// frees it once the server's probes go unanswered: within about 10 s here
// (a second apart, the server's system's count of them), where the
// server's default kept it two hours.
func TestSilentClientFreesItsLock(t *testing.T) {
	pgdriver.QuickSilence(t)
	url := pgtest.URL(t)
	holder := conn(t, url)
	if _, err := holder.ExecContext(context.Background(), `SELECT pg_advisory_lock(4242)`); err != nil {
		t.Fatal(err)
	}
	client, server := ports(t, holder)
	netcut.Silence(t, client, server)
	other := open(t, url)
	err := within(t, 2*time.Minute, func() error {
		for {
			var ok bool
			if err := other.QueryRowContext(context.Background(), `SELECT pg_try_advisory_lock(4242)`).Scan(&ok); err != nil || ok {
				return err
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}
