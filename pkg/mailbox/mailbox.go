// Package mailbox is teamkit's durable store: the team mailbox (messages with
// read state), readiness marks, agent records, asks and resume bookkeeping, in
// one SQLite database shared by every command and every agent of a team.
//
// SQLite runs in WAL mode with synchronous=NORMAL and a busy timeout, and every
// transaction is BEGIN IMMEDIATE: a read-then-write takes the write lock before
// it reads, so two processes can never both claim the same message or both
// decide the same ask. The schema is embedded and migrated in place, keyed by
// PRAGMA user_version, so a database made by an older teamkit opens in a newer
// one.
package mailbox

import (
	"bytes"
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Sentinel kinds of failure a caller (or a user) must tell apart.
var (
	ErrLocked   = errors.New("database is locked by another process")
	ErrReadOnly = errors.New("database is read-only")
	ErrCorrupt  = errors.New("not a teamkit database, or it is corrupt")
	ErrNoDir    = errors.New("directory does not exist")
	ErrTooNew   = errors.New("database was written by a newer teamkit")
	ErrNotFound = errors.New("not found")
	ErrBackend  = errors.New("unsupported database")
)

// Error is a mailbox failure with the operation and database it concerns.
type Error struct {
	Op   string
	Path string
	Kind error // one of the sentinels above, or nil
	Err  error
}

func (e *Error) Error() string {
	msg := e.Op + " " + e.Path + ": "
	switch {
	case e.Kind == ErrNotFound:
		return msg + e.Err.Error()
	case e.Kind != nil && e.Err != nil && e.Err != e.Kind:
		return msg + e.Kind.Error() + " (" + e.Err.Error() + ")"
	case e.Kind != nil:
		return msg + e.Kind.Error()
	default:
		return msg + e.Err.Error()
	}
}

func (e *Error) Unwrap() []error { return []error{e.Kind, e.Err} }

// Hint tells the user what to do about the failure.
func (e *Error) Hint() string {
	switch e.Kind {
	case ErrLocked:
		return "another teamkit command holds the write lock; retry, or raise TEAMKIT_BUSY_TIMEOUT"
	case ErrReadOnly:
		return "the database file or its directory is not writable by you; fix the permissions or choose another --db"
	case ErrCorrupt:
		return "point --db or TEAMKIT_DB at a teamkit mailbox; nothing was written to this file"
	case ErrNoDir:
		return "create the directory first, or choose another --db"
	}
	return ""
}

// Options tune Open.
type Options struct {
	// BusyTimeout is how long a command waits for another's write lock.
	BusyTimeout time.Duration
	// Now is the clock (tests inject one).
	Now func() time.Time
	// CreateDir makes the database's directory when it is missing (the
	// default XDG location); a path the user chose must already exist.
	CreateDir bool
}

// DefaultBusyTimeout covers a burst of concurrent drains on a slow disk.
const DefaultBusyTimeout = 10 * time.Second

// DB is an open mailbox.
type DB struct {
	db   *sql.DB
	path string
	now  func() time.Time
}

// Open opens the mailbox at path, creating it and migrating its schema.
func Open(ctx context.Context, path string, o Options) (*DB, error) {
	if strings.HasPrefix(path, "postgres://") || strings.HasPrefix(path, "postgresql://") {
		return nil, &Error{Op: "open mailbox", Path: redact(path), Kind: ErrBackend,
			Err: errors.New("the PostgreSQL backend is not part of this build; use a SQLite file path")}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.BusyTimeout == 0 {
		o.BusyTimeout = DefaultBusyTimeout
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, &Error{Op: "open mailbox", Path: path, Kind: ErrCorrupt, Err: errors.New("it is a directory")}
	}
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if !o.CreateDir {
			return nil, &Error{Op: "open mailbox", Path: path, Kind: ErrNoDir, Err: fmt.Errorf("%s is missing", dir)}
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, &Error{Op: "create mailbox directory", Path: dir, Err: err}
		}
	}
	q := url.Values{}
	q.Set("_busy_timeout", fmt.Sprint(o.BusyTimeout.Milliseconds()))
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "NORMAL")
	q.Set("_txlock", "immediate")
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
	sdb, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, &Error{Op: "open mailbox", Path: path, Err: err}
	}
	d := &DB{db: sdb, path: path, now: o.Now}
	if err := d.migrate(ctx); err != nil {
		sdb.Close()
		return nil, err
	}
	return d, nil
}

// Close releases the database.
func (d *DB) Close() error { return d.db.Close() }

// Path is the database file.
func (d *DB) Path() string { return d.path }

func redact(u string) string {
	if p, err := url.Parse(u); err == nil && p.User != nil {
		p.User = url.User(p.User.Username())
		return p.String()
	}
	return u
}

// fail wraps err from operation op with the database path and its kind.
func (d *DB) fail(op string, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{Op: op, Path: d.path, Kind: kindOf(err), Err: err}
}

func kindOf(err error) error {
	if errors.Is(err, ErrNotFound) {
		return ErrNotFound
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return nil
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return ErrLocked
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM:
		return ErrReadOnly
	case sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
		return ErrCorrupt
	case sqlite3.SQLITE_CANTOPEN:
		// The directory exists (Open checked), so this is permissions.
		return ErrReadOnly
	}
	return nil
}

// inTx runs fn in one BEGIN IMMEDIATE transaction and commits it, or rolls
// back on any error.
func (d *DB) inTx(ctx context.Context, op string, fn func(tx *sql.Tx) error) error {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return d.fail(op, err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return d.fail(op, err)
	}
	if err := tx.Commit(); err != nil {
		return d.fail(op, err)
	}
	return nil
}

func (d *DB) migrate(ctx context.Context) error {
	files, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(files)
	var current int
	if err := d.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&current); err != nil {
		return d.fail("open mailbox", err)
	}
	if current == len(files) {
		return nil
	}
	return d.inTx(ctx, "migrate mailbox", func(tx *sql.Tx) error {
		// Another process may have migrated while we waited for the lock.
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&current); err != nil {
			return err
		}
		if current > len(files) {
			return &Error{Op: "open mailbox", Path: d.path, Kind: ErrTooNew,
				Err: fmt.Errorf("schema version %d, this teamkit knows %d", current, len(files))}
		}
		for i := current; i < len(files); i++ {
			ddl, err := migrations.ReadFile(files[i])
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, string(ddl)); err != nil {
				return fmt.Errorf("apply %s: %w", files[i], err)
			}
		}
		_, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(files)))
		return err
	})
}

// SchemaVersion is the migrated schema version (for tests and diagnostics).
func (d *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := d.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
	return v, d.fail("read schema version", err)
}

// DataVersion changes whenever another connection commits to the database; a
// watcher polls it (one cheap pragma) and re-queries only when it moves.
func (d *DB) DataVersion(ctx context.Context, conn *sql.Conn) (int64, error) {
	var v int64
	err := conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v)
	return v, d.fail("watch mailbox", err)
}

// Watch calls check, then again each time the database changes, until check
// reports done, ctx ends, or the deadline passes (ok=false). It polls
// PRAGMA data_version every interval: a few microseconds per poll, and a
// change is noticed within one interval.
func (d *DB) Watch(ctx context.Context, deadline time.Time, interval time.Duration, check func() (bool, error)) (ok bool, err error) {
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return false, d.fail("watch mailbox", err)
	}
	defer conn.Close()
	last := int64(-1)
	for {
		v, err := d.DataVersion(ctx, conn)
		if err != nil {
			return false, err
		}
		if v != last {
			last = v
			done, err := check()
			if err != nil || done {
				return done, err
			}
		}
		wait := interval
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				return false, nil
			}
			wait = min(wait, left)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return false, ctx.Err()
		case <-t.C:
		}
	}
}

func nanos(t time.Time) int64 { return t.UnixNano() }

func fromNanos(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.Unix(0, n.Int64).UTC()
}

// marshalNoEscape is json.Marshal without HTML escaping, so a body holding
// "<" or "&" comes out as the sender wrote it.
func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
