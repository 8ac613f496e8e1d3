// Command benchref is the reference point of scripts/bench.sh: a bare Go
// binary that opens the same database with the same driver (modernc.org/sqlite)
// and the same connection options as the teamkit commands, runs SELECT 1 and
// exits. A teamkit command that costs about as much as this is paying only
// for process start-up and opening SQLite.
//
//	benchref DB            open DB, SELECT 1, exit
//	benchref -seed N DB    fill the existing mailbox DB with N messages
//
// -seed is setup for the benchmark, never timed: N messages for team crew,
// 1 ms apart and a month old, about 300 of them unread and the rest read, so
// a 1,000- and a 1,000,000-message mailbox differ only in history.
package main

import (
	"database/sql"
	"flag"
	"fmt"
	"net/url"
	"os"

	_ "modernc.org/sqlite"

	"github.com/teamkit/teamkit/pkg/mailbox/mailboxtest"
)

func main() {
	seed := flag.Int("seed", 0, "fill the mailbox with `N` messages instead")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: benchref [-seed N] DB")
		os.Exit(64)
	}
	if err := run(flag.Arg(0), *seed); err != nil {
		fmt.Fprintln(os.Stderr, "benchref:", err)
		os.Exit(1)
	}
}

func run(path string, seed int) error {
	// The options pkg/mailbox opens every database with.
	q := url.Values{}
	q.Set("_busy_timeout", "10000")
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "NORMAL")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return err
	}
	defer db.Close()
	if seed > 0 {
		return mailboxtest.Fill(db, seed)
	}
	var one int
	return db.QueryRow("SELECT 1").Scan(&one)
}
