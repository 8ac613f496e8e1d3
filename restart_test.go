//go:build linux

package teamkit_test

// A PostgreSQL server of a script's own, which the script may stop and
// start: waits must ride out a server restart (restart_waits.txtar).

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/teamkit/teamkit/internal/pgtest"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

type clusterKey struct{}

// pgServer runs "pgserver own": start a cluster of the script's own and
// point TEAMKIT_DB at a fresh database on it (removed when the script
// ends); "pgserver stop" shuts it down (fast shutdown: every session is
// ended, as in a restart); "pgserver start" starts it again on the same
// port; "pgserver xacts VAR" sets VAR to the number of transactions the
// script's database has committed so far, once no other session is left
// (a session's counts are published when it ends); "pgserver listeners N" waits until N sessions of the script's
// database sit in LISTEN (the waiters are waiting); "pgserver tables"
// prints the tables of the script's database.
func pgServer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: pgserver own|stop|start|listeners N|xacts VAR|tables")
	}
	switch args[0] {
	case "xacts":
		if len(args) != 2 {
			ts.Fatalf("usage: pgserver xacts VAR")
		}
		ctx := context.Background()
		db, name := adminDB(ts)
		defer db.Close()
		for deadline := time.Now().Add(waitLimit); ; time.Sleep(pollEvery) {
			var others int
			ts.Check(db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = $1`, name).Scan(&others))
			if others == 0 {
				break
			}
			if time.Now().After(deadline) {
				ts.Fatalf("pgserver xacts: %d other sessions still open", others)
			}
		}
		var n int64
		ts.Check(db.QueryRowContext(ctx, `SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = $1`, name).Scan(&n))
		ts.Logf("%s=%d", args[1], n)
		ts.Setenv(args[1], strconv.FormatInt(n, 10))
	case "listeners":
		want, err := strconv.Atoi(args[len(args)-1])
		ts.Check(err)
		ctx := context.Background()
		db, name := adminDB(ts)
		defer db.Close()
		for deadline := time.Now().Add(waitLimit); ; time.Sleep(pollEvery) {
			var n int
			ts.Check(db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
				WHERE datname = $1 AND `+pgListening+` AND state = 'idle'`, name).Scan(&n))
			if n >= want {
				return
			}
			if time.Now().After(deadline) {
				ts.Fatalf("pgserver listeners: %d sessions listening, want %d", n, want)
			}
		}
	case "own":
		c, err := pgtest.NewCluster()
		ts.Check(err)
		ts.Defer(c.Close)
		u, err := c.URL()
		ts.Check(err)
		ts.Setenv("TEAMKIT_DB", u)
		ts.Setenv("RUNS", mailbox.RunsDir(filepath.Join(ts.Getenv("WORK"), "state", "teamkit"), u))
		ts.Value(clusterKey{}).(*ownCluster).c = c
	case "stop", "start":
		c := ts.Value(clusterKey{}).(*ownCluster).c
		if c == nil {
			ts.Fatalf("pgserver %s: no cluster of this script's own (pgserver own)", args[0])
		}
		if args[0] == "stop" {
			ts.Check(c.Stop())
		} else {
			ts.Check(c.Start())
		}
	case "tables":
		// The script's database's tables, one a line: none until a
		// command made the mailbox's schema.
		db, err := sql.Open("pgx", ts.Getenv("TEAMKIT_DB"))
		ts.Check(err)
		defer db.Close()
		rows, err := db.Query(`SELECT schemaname || '.' || tablename FROM pg_tables
			WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1`)
		ts.Check(err)
		defer rows.Close()
		for rows.Next() {
			var t string
			ts.Check(rows.Scan(&t))
			fmt.Fprintln(ts.Stdout(), t)
		}
		ts.Check(rows.Err())
	default:
		ts.Fatalf("usage: pgserver own|stop|start|listeners N|xacts VAR|tables")
	}
}

type ownCluster struct{ c *pgtest.Cluster }

// adminDB connects to the "postgres" database of the script's server, to
// watch the script's database (named name) without adding to its counts.
func adminDB(ts *testscript.TestScript) (db *sql.DB, name string) {
	u, err := url.Parse(ts.Getenv("TEAMKIT_DB"))
	ts.Check(err)
	name = strings.TrimPrefix(u.Path, "/")
	u.Path = "/postgres"
	db, err = sql.Open("pgx", u.String())
	ts.Check(err)
	db.SetMaxOpenConns(1)
	return db, name
}
