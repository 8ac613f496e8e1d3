// Command benchfloor is the floor scripts/bench.sh --base measures the
// SQLite commands against: a bare Go program that opens the same SQLite
// file with the same driver (modernc.org/sqlite) and connection options as
// the commands, runs one statement and exits. Unlike benchref it links
// nothing for PostgreSQL, as inbox, stale and ready do not.
//
//	benchfloor DB
package main

import (
	"database/sql"
	"fmt"
	"net/url"
	"os"

	_ "modernc.org/sqlite"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: benchfloor DB")
		os.Exit(64)
	}
	// The options of pkg/mailbox's openSQLite.
	q := url.Values{}
	q.Set("_busy_timeout", "10000")
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "NORMAL")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: os.Args[1]}).EscapedPath()+"?"+q.Encode())
	if err == nil {
		var v int
		err = db.QueryRow("SELECT count(*) FROM messages WHERE id = 1").Scan(&v)
		db.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchfloor:", err)
		os.Exit(1)
	}
}
