// Command benchfloor is the floor scripts/bench.sh --base measures the
// SQLite commands against: a bare Go program that opens the same SQLite
// file with the same driver (modernc.org/sqlite) and connection options as
// the commands, runs one statement and exits. Unlike benchref it links
// nothing for PostgreSQL, as inbox, stale and ready do not.
//
//	benchfloor DB
//	benchfloor -send DB
//
// With -send the one statement is inbox send's own INSERT of a message:
// the floor of a command that writes, which also pays SQLite's commit and,
// as the last connection closes, its checkpoint of the WAL (two fsyncs),
// which a read never does.
package main

import (
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"time"

	_ "modernc.org/sqlite"
)

func main() {
	args := os.Args[1:]
	send := len(args) == 2 && args[0] == "-send"
	if send {
		args = args[1:]
	}
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: benchfloor [-send] DB")
		os.Exit(64)
	}
	// The options of pkg/mailbox's openSQLite.
	q := url.Values{}
	q.Set("_busy_timeout", "10000")
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "NORMAL")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: args[0]}).EscapedPath()+"?"+q.Encode())
	if err == nil {
		var v int64
		if send {
			// pkg/mailbox's Send, its arguments as inbox send crew w1 hello passes them.
			err = db.QueryRow(`INSERT INTO messages (team, sender, recipient, subject, body, preview, reply_to, created_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
				"crew", "", "w1", "", "hello", "hello", nil, time.Now().UnixNano()).Scan(&v)
		} else {
			err = db.QueryRow("SELECT count(*) FROM messages WHERE id = 1").Scan(&v)
		}
		db.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchfloor:", err)
		os.Exit(1)
	}
}
