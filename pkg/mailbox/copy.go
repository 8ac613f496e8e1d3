package mailbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrNotEmpty is Copy's refusal to write into a mailbox that holds data.
var ErrNotEmpty = errors.New("the target mailbox is not empty")

// versionTable is the PostgreSQL backend's bookkeeping, never copied.
const versionTable = "teamkit_schema"

// TableCount is how many rows Copy copied into one table.
type TableCount struct {
	Table string `json:"table"`
	Rows  int64  `json:"rows"`
}

// Copy copies every row of every table of src into dst — a SQLite mailbox
// into PostgreSQL, say, or back — keeping ids, so replies, asks and their
// intents still point at each other and the ids people saw stay valid.
// Both must be at the same schema version (Open migrates both to this
// teamkit's), and dst must be empty. The tables and columns are read from
// the source, so tables added by later migrations are copied too. The
// source is read inside a serialized transaction (on SQLite, its write
// lock), so nothing is written to it meanwhile; dst is written in one
// transaction: a failed copy leaves it empty.
func Copy(ctx context.Context, src, dst *DB) ([]TableCount, error) {
	sv, err := src.SchemaVersion(ctx)
	if err != nil {
		return nil, err
	}
	dv, err := dst.SchemaVersion(ctx)
	if err != nil {
		return nil, err
	}
	if sv != dv {
		return nil, dst.fail("copy mailbox", fmt.Errorf("source schema version %d, target %d", sv, dv))
	}
	var out []TableCount
	err = src.inTx(ctx, "copy mailbox", func(stx *sql.Tx) error {
		tables, err := src.be.tables(ctx, stx)
		if err != nil {
			return err
		}
		if _, ok := src.be.(pgBackend); ok && len(tables) > 0 {
			// PostgreSQL's write lock (an advisory lock) keeps out only
			// other serialized transactions: sends, drains and the
			// compare-and-sets write beside it. Locking the tables
			// against writes (reads go on) is what SQLite's write lock
			// does, and it makes the copy one moment of the source.
			quoted := make([]string, len(tables))
			for i, t := range tables {
				quoted[i] = `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
			}
			if _, err := stx.ExecContext(ctx, `LOCK TABLE `+strings.Join(quoted, ", ")+` IN EXCLUSIVE MODE`); err != nil {
				return err
			}
		}
		last, err := src.be.lastIDs(ctx, stx)
		if err != nil {
			return err
		}
		return dst.inTx(ctx, "copy mailbox", func(dtx *sql.Tx) error {
			have, err := dst.be.tables(ctx, dtx)
			if err != nil {
				return err
			}
			for _, t := range tables {
				if !slices.Contains(have, t) {
					return fmt.Errorf("table %s of the source is not in the target", t)
				}
				var one int
				err := dtx.QueryRowContext(ctx, `SELECT 1 FROM `+t+` LIMIT 1`).Scan(&one)
				if err == nil {
					return &Error{Op: "copy mailbox", Path: dst.path, Kind: ErrNotEmpty, Err: fmt.Errorf("table %s has rows", t), Flag: dst.flag}
				}
				if !errors.Is(err, sql.ErrNoRows) {
					return err
				}
			}
			for _, t := range tables {
				n, err := copyTable(ctx, stx, dtx, t)
				var se sourceError
				if errors.As(err, &se) {
					// The source's failure (a damaged page, say), in its
					// name: the target is fine, and left empty.
					return src.fail("copy mailbox", fmt.Errorf("copy table %s: %w", t, se.err))
				}
				if err != nil {
					return fmt.Errorf("copy table %s: %w", t, err)
				}
				out = append(out, TableCount{Table: t, Rows: n})
			}
			return dst.be.afterCopy(ctx, dtx, last)
		})
	})
	return out, err
}

// sourceError is copyTable's failure to read the source (as opposed to
// writing the target), for Copy to report in the source's name.
type sourceError struct{ err error }

func (e sourceError) Error() string { return e.err.Error() }
func (e sourceError) Unwrap() error { return e.err }

// copyTable copies table t row by row, a few hundred rows per INSERT. A
// failure to read the source is a sourceError.
func copyTable(ctx context.Context, stx, dtx *sql.Tx, t string) (int64, error) {
	rows, err := stx.QueryContext(ctx, `SELECT * FROM `+t)
	if err != nil {
		return 0, sourceError{err}
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, sourceError{err}
	}
	per := max(1, min(500, 30000/len(cols)))
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	var batch []any
	var n int64
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		k := len(batch) / len(cols)
		q := `INSERT INTO ` + t + ` (` + strings.Join(cols, ", ") + `) VALUES ` + strings.TrimSuffix(strings.Repeat(one+", ", k), ", ")
		_, err := dtx.ExecContext(ctx, q, batch...)
		batch = batch[:0]
		return err
	}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return n, sourceError{err}
		}
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				vals[i] = string(b) // every column is text or a number
			}
		}
		batch = append(batch, vals...)
		n++
		if int(n)%per == 0 {
			if err := flush(); err != nil {
				return n, err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return n, sourceError{err}
	}
	return n, flush()
}

// Same reports whether a and b are one PostgreSQL mailbox reached by two
// URLs (another spelling of the host, a parameter more): the same server
// (its system identifier and start time), database and schema. Copying a
// mailbox into itself would wait on its own lock. Files are compared by
// path before they are opened; a server that will not say is taken for
// another.
func Same(ctx context.Context, a, b *DB) bool {
	_, pa := a.be.(pgBackend)
	_, pb := b.be.(pgBackend)
	if !pa || !pb {
		return false
	}
	const q = `SELECT system_identifier::text || ' ' || pg_postmaster_start_time()::text || ' ' || current_database() || ' ' || current_schema()
		FROM pg_control_system()`
	var ia, ib string
	if a.db.QueryRowContext(ctx, q).Scan(&ia) != nil || b.db.QueryRowContext(ctx, q).Scan(&ib) != nil {
		return false
	}
	return ia == ib
}
