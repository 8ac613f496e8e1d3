// Command benchref is the reference point of scripts/bench.sh: a bare Go
// binary that opens the same database with the same driver and connection
// options as the teamkit commands (modernc.org/sqlite for a file, pgx for
// a postgres:// URL), runs SELECT 1 and exits. A teamkit command that costs
// about as much as this is paying only for process start-up and opening
// the database.
//
//	benchref DB            open DB, SELECT 1, exit
//	benchref -seed N DB    fill the existing mailbox DB with N messages
//	benchref -pg N         print the URLs of N fresh PostgreSQL databases,
//	                       one a line, and keep their server until stdin closes
//
// -seed is setup for the benchmark, never timed: N messages for team crew,
// 1 ms apart and a month old, about 300 of them unread and the rest read, so
// a 1,000- and a 1,000,000-message mailbox differ only in history.
//
// -pg uses TEAMKIT_TEST_POSTGRES, else starts a throwaway cluster as the
// tests do (internal/pgtest), stopped when stdin closes.
package main

import (
	"bufio"
	"database/sql"
	"flag"
	"fmt"
	"net/url"
	"os"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"github.com/teamkit/teamkit/internal/mailboxtest"
	"github.com/teamkit/teamkit/internal/pgtest"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

func main() {
	seed := flag.Int("seed", 0, "fill the mailbox with `N` messages instead")
	pg := flag.Int("pg", 0, "print `N` fresh PostgreSQL database URLs and hold the server until stdin closes")
	flag.Parse()
	if *pg > 0 {
		err := serve(*pg)
		pgtest.Stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchref:", err)
			os.Exit(1)
		}
		return
	}
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: benchref [-seed N] DB | benchref -pg N")
		os.Exit(64)
	}
	if err := run(flag.Arg(0), *seed); err != nil {
		fmt.Fprintln(os.Stderr, "benchref:", err)
		os.Exit(1)
	}
}

func serve(n int) error {
	for i := 0; i < n; i++ {
		u, _, err := pgtest.NewDatabase()
		if err != nil {
			return err
		}
		fmt.Println(u)
	}
	bufio.NewReader(os.Stdin).ReadString(0) // until EOF
	return nil
}

func run(path string, seed int) error {
	db, err := open(path)
	if err != nil {
		return err
	}
	defer db.Close()
	if seed > 0 {
		if mailbox.IsPostgres(path) {
			return mailboxtest.FillPostgres(db, seed)
		}
		return mailboxtest.Fill(db, seed)
	}
	var one int
	return db.QueryRow("SELECT 1").Scan(&one)
}

// open opens path with the options pkg/mailbox opens every database with.
func open(path string) (*sql.DB, error) {
	if mailbox.IsPostgres(path) {
		cfg, err := pgx.ParseConfig(path)
		if err != nil {
			return nil, err
		}
		cfg.RuntimeParams["application_name"] = "teamkit"
		cfg.RuntimeParams["lock_timeout"] = "10000"
		cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
		return stdlib.OpenDB(*cfg), nil
	}
	q := url.Values{}
	q.Set("_busy_timeout", "10000")
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "NORMAL")
	q.Set("_txlock", "immediate")
	return sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode())
}
