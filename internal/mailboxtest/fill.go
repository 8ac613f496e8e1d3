// Package mailboxtest builds mailboxes of a given size for benchmarks: the
// in-process benchmarks of pkg/mailbox and scripts/bench.sh (through
// scripts/benchref) measure the same data.
//
// Internal: a test kit; only tests import it, never a shipped binary.
package mailboxtest

import (
	"database/sql"
	"time"
)

// Fill inserts n messages into a migrated mailbox in one INSERT … SELECT
// from a recursive CTE: team crew's recipients w0…w8 and "drainer", 1 ms
// apart, ending 30 days ago; about 300 of them (every n/300th, none for
// drainer) unread, the rest read. So a 1k and a 1M mailbox have the same few
// hundred unread messages (99.97% read at 1M) and differ only in history,
// which is what stale and drain must not scale with.
func Fill(db *sql.DB, n int) error {
	step := max(n/300, 2)
	base := time.Now().Add(-30 * 24 * time.Hour).Add(-time.Duration(n) * time.Millisecond).UnixNano()
	_, err := db.Exec(`INSERT INTO messages (team, sender, recipient, subject, body, preview, created_at, read_at)
		WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		SELECT 'crew', 'boss',
		       CASE WHEN i % 10 = 9 THEN 'drainer' ELSE 'w' || (i % 10) END,
		       'task ' || i,
		       'Task ' || i || ': implement the next item on the list, run the tests, report back.' || char(10) || 'Details follow.',
		       'Task ' || i || ': implement the next item on the list, run the tests, report back.',
		       ? + i * 1000000,
		       CASE WHEN i % ? = 0 AND i % 10 != 9 THEN NULL ELSE ? + i * 1000000 + 500000 END
		FROM n`, n, base, step, base)
	return err
}

// FillPostgres is Fill for a PostgreSQL mailbox (db opened with pgx, $n
// placeholders): the same rows, made by generate_series, and ANALYZE after,
// as autovacuum would soon do on a real server.
func FillPostgres(db *sql.DB, n int) error {
	step := max(n/300, 2)
	base := time.Now().Add(-30 * 24 * time.Hour).Add(-time.Duration(n) * time.Millisecond).UnixNano()
	_, err := db.Exec(`INSERT INTO messages (team, sender, recipient, subject, body, preview, created_at, read_at)
		SELECT 'crew', 'boss',
		       CASE WHEN i % 10 = 9 THEN 'drainer' ELSE 'w' || (i % 10) END,
		       'task ' || i,
		       'Task ' || i || ': implement the next item on the list, run the tests, report back.' || chr(10) || 'Details follow.',
		       'Task ' || i || ': implement the next item on the list, run the tests, report back.',
		       $2::bigint + i * 1000000,
		       CASE WHEN i % $3 = 0 AND i % 10 != 9 THEN NULL ELSE $2::bigint + i * 1000000 + 500000 END
		FROM generate_series(1, $1::bigint) AS n(i)`, n, base, step)
	if err != nil {
		return err
	}
	_, err = db.Exec(`VACUUM ANALYZE messages`)
	return err
}
