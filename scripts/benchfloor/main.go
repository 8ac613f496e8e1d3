// Command benchfloor is the floor scripts/bench.sh --base measures the
// SQLite commands against: a bare Go program that opens the same SQLite
// file with the same driver (modernc.org/sqlite) and connection options as
// the commands, runs one statement and exits. Unlike benchref it links
// nothing for PostgreSQL, as inbox, stale and ready do not.
//
//	benchfloor DB
//	benchfloor -send DB
//	benchfloor -stale DB
//
// With -send the one statement is inbox send's own INSERT of a message:
// the floor of a command that writes, which also pays SQLite's commit and,
// as the last connection closes, its checkpoint of the WAL (two fsyncs),
// which a read never does. With -stale it is stale's own SELECT of the
// messages unread for 10 minutes, every row scanned and printed as one
// line: the floor of a command that lists.
package main

import (
	"bufio"
	"database/sql"
	"fmt"
	"io"
	"net/url"
	"os"
	"time"

	_ "modernc.org/sqlite"
)

func main() {
	args := os.Args[1:]
	mode := ""
	if len(args) == 2 && (args[0] == "-send" || args[0] == "-stale") {
		mode, args = args[0], args[1:]
	}
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: benchfloor [-send | -stale] DB")
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
		switch mode {
		case "-send":
			// pkg/mailbox's Send, its arguments as inbox send crew w1 hello passes them.
			err = db.QueryRow(`INSERT INTO messages (team, sender, recipient, subject, body, preview, reply_to, created_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
				"crew", "", "w1", "", "hello", "hello", nil, time.Now().UnixNano()).Scan(&v)
		case "-stale":
			err = list(db, os.Stdout)
		default:
			err = db.QueryRow("SELECT count(*) FROM messages WHERE id = 1").Scan(&v)
		}
		db.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchfloor:", err)
		os.Exit(1)
	}
}

// list runs pkg/mailbox's Stale query (stale crew --min 10) and prints each
// row as a line of its fields.
func list(db *sql.DB, w io.Writer) error {
	rows, err := db.Query(`SELECT m.id, m.sender, m.recipient, m.subject, m.preview, m.reply_to, m.created_at
		FROM messages m INDEXED BY messages_unread_by_age
		WHERE m.team = ? AND m.read_at IS NULL AND m.created_at <= ?
		ORDER BY m.created_at, m.id`, "crew", time.Now().Add(-10*time.Minute).UnixNano())
	if err != nil {
		return err
	}
	defer rows.Close()
	out := bufio.NewWriter(w)
	for rows.Next() {
		var id int64
		var from, to, subject, preview string
		var replyTo, created sql.NullInt64
		if err := rows.Scan(&id, &from, &to, &subject, &preview, &replyTo, &created); err != nil {
			return err
		}
		fmt.Fprintln(out, id, to, from, time.Since(time.Unix(0, created.Int64)).Round(time.Hour), preview)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return out.Flush()
}
