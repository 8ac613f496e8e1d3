//go:build linux

package teamkit_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/rogpeppe/go-internal/testscript"
)

type outageKey struct{}

// outage is a script's mailbox outage under way: the SQLite connection
// holding the write lock, or the PostgreSQL database refusing connections.
type outage struct {
	sqlite *sql.DB
	conn   *sql.Conn
	pgDB   string
}

// dbOutage runs "dbdown" and "dbup". dbdown takes the script's mailbox
// down until dbup brings it back:
//
//   - SQLite: another connection holds the write lock (BEGIN IMMEDIATE), so
//     every write waits TEAMKIT_BUSY_TIMEOUT and fails "database is
//     locked" — a SQLite mailbox's outage (reads go on: WAL).
//   - PostgreSQL: the database stops accepting connections
//     (ALLOW_CONNECTIONS false) and every session on it is ended, so every
//     command fails to connect, as when the server is down; the other
//     scripts' databases on the same server go on.
func dbOutage(verb string) func(ts *testscript.TestScript, neg bool, args []string) {
	return func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 0 {
			ts.Fatalf("usage: %s", verb)
		}
		outageCmd(ts, verb)
	}
}

func outageCmd(ts *testscript.TestScript, verb string) {
	st, _ := ts.Value(outageKey{}).(*outage)
	if st == nil {
		ts.Fatalf("no outage state: the Setup must add one")
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	dbURL := ts.Getenv("TEAMKIT_DB")
	pg := strings.HasPrefix(dbURL, "postgres")
	switch verb {
	case "dbdown":
		if st.conn != nil || st.pgDB != "" {
			ts.Fatalf("dbdown: the mailbox is down already")
		}
		if !pg {
			db, err := sql.Open("sqlite", "file:"+dbURL+"?_busy_timeout=10000")
			ts.Check(err)
			conn, err := db.Conn(ctx)
			ts.Check(err)
			_, err = conn.ExecContext(ctx, "BEGIN IMMEDIATE")
			ts.Check(err)
			st.sqlite, st.conn = db, conn
			return
		}
		u, err := url.Parse(dbURL)
		ts.Check(err)
		name := strings.TrimPrefix(u.Path, "/")
		ts.Check(pgAlter(ctx, dbURL, name, false))
		st.pgDB = name
	case "dbup":
		switch {
		case st.conn != nil:
			_, err := st.conn.ExecContext(ctx, "ROLLBACK")
			ts.Check(err)
			ts.Check(st.conn.Close())
			ts.Check(st.sqlite.Close())
			st.sqlite, st.conn = nil, nil
		case st.pgDB != "":
			ts.Check(pgAlter(ctx, dbURL, st.pgDB, true))
			st.pgDB = ""
		default:
			ts.Fatalf("dbup: the mailbox is not down")
		}
	}
}

// pgAlter lets database name of the server of dbURL take connections, or
// not (and then ends every session on it). It works from another database
// of the server (postgres, else template1): PostgreSQL refuses to change
// this for the database it is connected to.
func pgAlter(ctx context.Context, dbURL, name string, allow bool) error {
	u, err := url.Parse(dbURL)
	if err != nil {
		return err
	}
	var c *pgx.Conn
	for _, admin := range []string{"postgres", "template1"} {
		u.Path = "/" + admin
		if c, err = pgx.Connect(ctx, u.String()); err == nil {
			break
		}
	}
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s ALLOW_CONNECTIONS %t", pgx.Identifier{name}.Sanitize(), allow)); err != nil {
		return err
	}
	if !allow {
		_, err = c.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name)
	}
	return err
}

// setupOutage gives a script its outage state, and ends an outage the
// script left on (a failed script), so its database can be dropped.
func setupOutage(e *testscript.Env) {
	st := &outage{}
	e.Values[outageKey{}] = st
	dbURL := e.Getenv("TEAMKIT_DB")
	e.Defer(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if st.conn != nil {
			st.conn.Close()
			st.sqlite.Close()
		}
		if st.pgDB != "" {
			pgAlter(ctx, dbURL, st.pgDB, true)
		}
	})
}
