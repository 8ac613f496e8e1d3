// Package mailbox is teamkit's durable store: the team mailbox (messages with
// read state), readiness marks, agent records, asks and resume bookkeeping, in
// one database shared by every command and every agent of a team.
//
// Two backends sit behind the one type DB: SQLite (a file path: one machine)
// and PostgreSQL (a postgres:// URL: a team across machines). The queries are
// written once, in portable SQL with ? placeholders, over database/sql; the
// PostgreSQL driver rebinds the placeholders (see rebind). The few pieces
// that truly differ — migrations, the drain's claim, locks, change
// notification, error kinds — are the backend interface, one file per
// backend (sqlite.go, postgres.go).
//
// Either way every read-then-write transaction (inTx) is serialized with the
// others: SQLite's BEGIN IMMEDIATE takes the write lock, PostgreSQL takes a
// transaction advisory lock. So two processes can never both decide the same
// ask. Drains lease their messages in a short claim (FOR UPDATE SKIP LOCKED
// on PostgreSQL) and mark them read in another after writing them, so
// drainers on many hosts run side by side, never get the same message while
// a lease holds, and no slow reader holds a lock. The schema is embedded and migrated in place, so a
// database made by an older teamkit opens in a newer one.
//
// Public: a Go program embedding teamkit may import this package.
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
	"strings"
	"time"
)

// The schema, one numbered file per version and backend. Both directories
// hold the same file names: a migration is added to both (a test checks).
//
//go:embed migrations/*.sql migrations/postgres/*.sql
var migrations embed.FS

// Sentinel kinds of failure a caller (or a user) must tell apart.
var (
	ErrLocked   = errors.New("database is locked by another process")
	ErrReadOnly = errors.New("database is read-only")
	ErrCorrupt  = errors.New("not a teamkit database, or it is corrupt")
	ErrNoDir    = errors.New("directory does not exist")
	ErrDangling = errors.New("it is a symbolic link to nothing")
	ErrTooNew   = errors.New("database was written by a newer teamkit")
	ErrNotFound = errors.New("not found")
	ErrBackend  = errors.New("unsupported database")
	ErrConnect  = errors.New("cannot reach the database server")
	ErrAuth     = errors.New("the database server refused the login")
	// ErrNoMailbox: Options.Existing found no mailbox there at all (an
	// empty database), where it would otherwise have made one.
	ErrNoMailbox = errors.New("it holds no mailbox")
	// ErrBadValue: a row holds what its column cannot (text where a time
	// goes, say), which teamkit never writes: another program changed it.
	ErrBadValue = errors.New("a row holds a value teamkit did not write")
	// ErrUnanswered: a send's message went out to the server and no answer
	// came back (its connection kept failing, or it was interrupted): it
	// may or may not be stored.
	ErrUnanswered = errors.New("the message went out and no answer came back: whether the server stored it is not known")
)

// Error is a mailbox failure with the operation and database it concerns.
type Error struct {
	Op   string
	Path string // the file, or the URL without its password
	Kind error  // one of the sentinels above, or nil
	Err  error
	// Flag is the option the database was given by, which the hint names:
	// "--to" for inbox copy's target (Options.Flag); "" is --db or
	// TEAMKIT_DB.
	Flag string
	// secret is the URL's password: scrubbed from the message in case a
	// driver error ever quotes it.
	secret string
}

func (e *Error) Error() string {
	msg := e.message()
	if len(e.secret) >= 4 {
		msg = strings.ReplaceAll(msg, e.secret, "xxxxx")
	}
	return msg
}

func (e *Error) message() string {
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
	// Where the database was named: the hint says which flag to fix.
	where, flag := "--db or TEAMKIT_DB", "--db"
	if e.Flag != "" {
		where, flag = e.Flag, e.Flag
	}
	switch e.Kind {
	case ErrLocked:
		return "another teamkit command holds the write lock; retry, or raise TEAMKIT_BUSY_TIMEOUT"
	case ErrReadOnly:
		if IsPostgres(e.Path) {
			return "the server accepts no writes (a standby, or default_transaction_read_only): point " + where + " at the primary"
		}
		return "the database file or its directory is not writable by you; fix the permissions or choose another " + flag
	case ErrPermission:
		return "the role may not create or use teamkit's tables there: give teamkit a database its role owns (as a superuser: createuser -P teamkit; createdb -O teamkit teamkit), or GRANT it CREATE and USAGE on the schema"
	case ErrNoDatabase:
		return "create it, owned by teamkit's role (as a superuser: createdb -O teamkit teamkit), or fix the database name in the URL"
	case ErrTLS:
		return "the server has no TLS, or its certificate does not verify: enable ssl on the server and give PGSSLROOTCERT (or sslrootcert=) its CA for sslmode=verify-full, or, on a trusted network only, use sslmode=disable"
	case ErrCorrupt:
		return "point " + where + " at a teamkit mailbox; nothing was written to this file"
	case ErrBadValue:
		return "another program changed that row: correct or delete it (sqlite3 on the file, psql on a server), or restore the mailbox from a copy"
	case ErrNoDir:
		return "create the directory first, or choose another " + flag
	case ErrDangling:
		return "mount or create what the link points to, or point " + where + " at the mailbox file itself"
	case ErrUnanswered:
		return "look for it (inbox list <team> <to> --all: its recipient may have read it already) once the server answers, before sending it again"
	case ErrConnect:
		return "is PostgreSQL running and listening at that host and port (listen_addresses, a firewall)? check the host and port in " + where
	case ErrAuth:
		return "check the user and password (in the URL, PGPASSWORD or ~/.pgpass), and that the server's pg_hba.conf lets this role in from this host with this sslmode"
	case ErrBadURL:
		return "fix the URL: postgres://user@host:port/dbname?sslmode=verify-full, where sslmode is disable, allow, prefer, require, verify-ca or verify-full and connect_timeout whole seconds"
	case ErrNotUTF8:
		return "a path, name or text from the environment holds other bytes (a Latin-1 directory name, say): rename it, or keep this team's mailbox in SQLite, which stores such bytes as they are"
	case ErrBackend:
		if e.Flag != "" {
			return e.Flag + " takes a SQLite file path or a postgres:// URL"
		}
		return "--db and TEAMKIT_DB take a SQLite file path or a postgres:// URL"
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
	// Existing opens only a mailbox already at this teamkit's schema
	// version, and changes nothing: no schema is made in an empty database,
	// none migrated (shell completion reads a mailbox, never writes one).
	Existing bool
	// Flag is the option path was given by, named in errors' hints
	// (Error.Flag): "--to" for inbox copy's target, where a hint saying
	// --db would send the user to fix the wrong one. "" is --db.
	Flag string
}

// DefaultBusyTimeout covers a burst of concurrent drains on a slow disk.
const DefaultBusyTimeout = 10 * time.Second

// DB is an open mailbox.
type DB struct {
	db   *sql.DB
	be   backend
	path string // the file, or the URL without its password: for messages
	// file is the file SQLite names the WAL after (sqliteFile: on Unix,
	// path with its links resolved; "" for PostgreSQL).
	file string
	now  func() time.Time
	// secret is the PostgreSQL password, kept only to scrub it from errors.
	secret string
	// flag is Options.Flag, for the errors of every later operation.
	flag string
	// created is set when Open made the schema in an empty database.
	created bool
	// lease is how long a drain's claim holds (SetLease).
	lease time.Duration
	// onClaim runs where a drain's claim may come to hold messages (OnClaim).
	onClaim func()
	// seen is what the last empty drain or stale learned of its team
	// (TeamKnown).
	seen teamSeen
	// headerVersion is the schema version a SQLite file's header held when
	// Open read it with nothing in its WAL (0 when unknown): openVersion.
	headerVersion int
}

// Replaced returns a check of whether, for a SQLite mailbox, its file has
// been removed or replaced since Replaced was called (a reset: rm
// teamkit.db*, and the next command makes a new file at the path). The
// connections still read the old file, which gets no more mail: a
// long-lived process (resume --watch) must end, or it watches nothing for
// ever. The check says nil for PostgreSQL, or a file still in place. (The
// file is looked at here, not in Open: a quick command would pay for it.)
func (d *DB) Replaced() func() error {
	opened, err := os.Stat(d.file)
	if d.file == "" || err != nil {
		return func() error { return nil }
	}
	return func() error {
		if now, err := os.Stat(d.file); err != nil || !os.SameFile(opened, now) {
			return fmt.Errorf("the mailbox file %s was removed or replaced since it was opened", d.file)
		}
		return nil
	}
}

// backend is what differs between SQLite and PostgreSQL; everything else is
// the shared code over d.db.
type backend interface {
	// name is "sqlite" or "postgres".
	name() string
	// migrationDir holds the backend's schema files, one per version.
	migrationDir() string
	// prepareMigration readies tx, in which migrate applies the files,
	// to read and write the version.
	prepareMigration(ctx context.Context, tx *sql.Tx) error
	// version is the migrated schema version (0 for a fresh database).
	version(ctx context.Context, q querier) (int, error)
	// setVersion records the migrated version.
	setVersion(ctx context.Context, tx *sql.Tx, v int) error
	// begin starts a write transaction; serialized ones never interleave
	// with each other (inTx). SQLite serializes every write transaction.
	begin(ctx context.Context, db *sql.DB, serialized bool) (*sql.Tx, error)
	// claim selects the unclaimed unread messages FROM from WHERE where
	// (with args, then the claim's time, now(), in Unix nanoseconds) oldest
	// first (at most limit, 0 for all), and leases them to token for lease
	// from that time, so that no concurrent drain can get them meanwhile,
	// and commits the lease; it calls claiming first where the lease may
	// come to commit (OnClaim). (Not given the *DB: a parameter of an
	// interface's method keeps every method of its type in the binary.)
	claim(ctx context.Context, db *sql.DB, now func() time.Time, claiming func(), from, where string, args []any, limit int, token int64, lease time.Duration) ([]Message, error)
	// lock is the named lock of team (see Lock).
	lock(d *dbRef, team, key string) (*Lock, error)
	// watch is Watch.
	watch(ctx context.Context, d *dbRef, t topic, deadline time.Time, check func() (bool, error)) (bool, error)
	// kindOf classifies a driver error as one of the sentinels, or nil.
	kindOf(err error) error
	// tables lists the mailbox's tables (not the backend's bookkeeping).
	tables(ctx context.Context, tx *sql.Tx) ([]string, error)
	// lastIDs is, per table with generated ids, the last id the mailbox
	// handed out: above the largest id left once prune removed the newest.
	lastIDs(ctx context.Context, tx *sql.Tx) (map[string]int64, error)
	// afterCopy readies dst after Copy inserted rows with their ids: its
	// next ids follow both those rows and the source's lastIDs.
	afterCopy(ctx context.Context, tx *sql.Tx, last map[string]int64) error
	// sendLock is the statement that takes, until its transaction ends, the
	// lock every message to team is stored under (one ? for the team),
	// "" where writes are serialized anyway (SQLite). A wake takes the
	// newest id it sees as covering all mail to the agent before it
	// (woke_through): that holds only if ids become visible in their
	// order, which on PostgreSQL, where an id is taken at the insert and
	// seen at the commit, takes the lock.
	sendLock() string
	// clock is the SQL for the database's own time in Unix nanoseconds,
	// "" when the database has no clock of its own (SQLite).
	clock() string
}

// dbRef is a DB as backend's methods take it, and not *DB itself: the
// linker counts the types a method of a type held in an interface takes
// as reachable by reflection, and with text/template linked (urfave/cli's
// help calls methods by name) it then keeps every exported method of each
// such type, used or not. With *DB there, inbox linked all of DB's
// methods and what they call. A dbRef has none.
type dbRef DB

// queryStrings runs a query of one text column, in tx (a *sql.Tx) or
// outside any transaction (the *sql.DB).
func queryStrings(ctx context.Context, tx interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, q string, args ...any) ([]string, error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// IsURL reports whether db (a --db or TEAMKIT_DB value) is a URL rather
// than a SQLite file path: the one answer every command and package takes
// to "file or URL?". A file may be made absolute, stat'ed and created, and
// has its run files beside it (RunsDir); a URL is used as given. Any
// scheme counts, so that "mysql://…" is refused by Open as a URL no
// backend serves, never created as a file of that name.
func IsURL(db string) bool { return strings.Contains(db, "://") }

// keyValueDSN reports whether db reads as a libpq connection string
// ("host=db1 dbname=team password=…"), which teamkit does not take: as a
// file path it would make a SQLite mailbox of that name, and print it,
// password and all.
func keyValueDSN(db string) bool {
	for f := range strings.FieldsSeq(db) {
		switch k, _, ok := strings.Cut(f, "="); k {
		case "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "sslmode", "service":
			if ok {
				return true
			}
		}
	}
	return false
}

// IsPostgres reports whether db (a --db or TEAMKIT_DB value) is a URL the
// PostgreSQL backend serves.
func IsPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// Open opens the mailbox at path — a SQLite file, or a postgres:// URL —
// creating it (or its schema) and migrating it.
func Open(ctx context.Context, path string, o Options) (*DB, error) {
	d, err := open(ctx, path, o)
	if err != nil && o.Flag != "" {
		var e *Error
		if errors.As(err, &e) && e.Flag == "" {
			e.Flag = o.Flag
		}
	}
	if d != nil {
		d.flag = o.Flag
	}
	return d, err
}

func open(ctx context.Context, path string, o Options) (*DB, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.BusyTimeout == 0 {
		o.BusyTimeout = DefaultBusyTimeout
	}
	var d *DB
	var err error
	_, statErr := os.Stat(path)
	created := !IsURL(path) && errors.Is(statErr, fs.ErrNotExist)
	switch {
	case IsPostgres(path):
		d, err = openPostgres(path, o)
	case IsURL(path):
		return nil, &Error{Op: "open mailbox", Path: redact(path), Kind: ErrBackend,
			Err: errors.New("not a postgres:// URL or a file path")}
	case keyValueDSN(path):
		// Not shown: it may hold a password.
		return nil, &Error{Op: "open mailbox", Path: "(a key=value connection string)", Kind: ErrBackend,
			Err: errors.New("a PostgreSQL mailbox is a postgres:// URL (postgres://user:password@host/dbname), not a libpq key=value string")}
	default:
		d, err = openSQLite(path, o)
	}
	if err != nil {
		return nil, err
	}
	prepare := d.migrateRetrying
	if o.Existing {
		prepare = d.requireCurrent
	}
	if err := prepare(ctx, o.BusyTimeout); err != nil {
		d.db.Close()
		return nil, d.fail("open mailbox", err)
	}
	if created {
		// SQLite created the file (and its WAL and shared-memory files)
		// under the umask, 0644 being common: a mailbox we create is
		// private. Later WAL files take the database's mode. An existing
		// file keeps the mode its owner chose. (Creating the file empty
		// beforehand instead opens a window in which a concurrent opener
		// finds a zero-length database and fails with SQLITE_BUSY.)
		for _, f := range []string{path, path + "-wal", path + "-shm"} {
			os.Chmod(f, 0o600)
		}
	}
	return d, nil
}

// migrateRetrying is migrate, tried again while the database is locked, up
// to the busy timeout. Processes opening a brand-new SQLite file at once can
// meet SQLITE_BUSY without SQLite's busy handler ever running (one of them
// is still switching the fresh file to WAL, or its first transaction holds
// the file while the other reads the schema version); TestConcurrentFirstOpen
// (eight opens of one new file, 30 times) fails without this retry.
func (d *DB) migrateRetrying(ctx context.Context, busy time.Duration) error {
	deadline := time.Now().Add(busy)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		err := d.migrate(ctx)
		if err == nil || !errors.Is(d.fail("open mailbox", err), ErrLocked) || time.Now().Add(wait).After(deadline) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// requireCurrent fails unless the schema is at this teamkit's version
// (Options.Existing): it only reads the version.
func (d *DB) requireCurrent(ctx context.Context, _ time.Duration) error {
	files, err := migrationFiles(d.be.migrationDir())
	if err != nil {
		return err
	}
	v, err := d.openVersion(ctx)
	if err == nil && v == 0 {
		return ErrNoMailbox
	}
	if err == nil && v != len(files) {
		err = fmt.Errorf("schema version %d, not this teamkit's %d (a command that writes migrates it)", v, len(files))
	}
	return err
}

// Close releases the database.
func (d *DB) Close() error {
	if s, ok := d.be.(sqliteBackend); ok {
		s.checkpoint(d)
	}
	return d.db.Close()
}

// Path is the database file, or the PostgreSQL URL without its password.
func (d *DB) Path() string { return d.path }

// Created reports whether Open made the mailbox: the schema went into an
// empty database (or a new file).
func (d *DB) Created() bool { return d.created }

// Backend is "sqlite" or "postgres".
func (d *DB) Backend() string { return d.be.name() }

// Redact is s, a --db value or any word a user typed, as it may be shown
// in a message: a URL without its password (a team name that was meant
// as --to's URL, say), a libpq key=value string not at all, other text as
// it is. Usage errors echo what was typed; secrets never land in output.
func Redact(s string) string {
	switch {
	case IsURL(s):
		return redact(s)
	case keyValueDSN(s):
		return "(a key=value connection string)"
	}
	return s
}

// redact is a database URL without its secrets, for messages: the
// password may be in the user info or in a parameter, password= or the
// client key's sslpassword= (any parameter whose name says password goes).
func redact(u string) string {
	// The userinfo runs to the first '@' before any '/', as libpq and pgx
	// read it: a '#' or '?' in an unencoded password is no fragment or
	// query there, whatever net/url makes of it.
	if scheme, rest, ok := strings.Cut(u, "://"); ok {
		if i := strings.IndexAny(rest, "@/"); i >= 0 && rest[i] == '@' {
			user, _, _ := strings.Cut(rest[:i], ":")
			u = scheme + "://" + user + "@" + rest[i+1:]
		}
	}
	p, err := url.Parse(u)
	if err != nil {
		return "(an unparsable database URL)"
	}
	if p.User != nil {
		p.User = url.User(p.User.Username())
	}
	// Pair by pair, as written: url.ParseQuery skips a pair it cannot
	// decode (a bad %-escape, a ';'), which would leave that password in.
	var keep []string
	changed := false
	for _, kv := range strings.Split(p.RawQuery, "&") {
		k, _, _ := strings.Cut(kv, "=")
		if uk, err := url.QueryUnescape(k); err == nil {
			k = uk
		}
		if strings.Contains(strings.ToLower(k), "password") {
			changed = true
			continue
		}
		keep = append(keep, kv)
	}
	if changed {
		p.RawQuery = strings.Join(keep, "&")
	}
	return p.String()
}

// fail wraps err from operation op with the database path and its kind.
func (d *DB) fail(op string, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		if e.secret == "" {
			e.secret = d.secret
		}
		if e.Flag == "" {
			e.Flag = d.flag
		}
		return err
	}
	kind := d.be.kindOf(err)
	switch {
	case errors.Is(err, ErrNotFound):
		kind = ErrNotFound
	case kind == nil && strings.HasPrefix(err.Error(), "sql: Scan error"):
		// database/sql's own error for a value its column's Go type
		// cannot take; it has no type of its own to test for.
		kind = ErrBadValue
	}
	return &Error{Op: op, Path: d.path, Kind: kind, Err: err, Flag: d.flag, secret: d.secret}
}

// inTx runs fn in one transaction and commits it, or rolls back on any
// error. The transaction is serialized with every other inTx (BEGIN
// IMMEDIATE on SQLite, an advisory lock on PostgreSQL), so fn may read and
// then write as if alone.
func (d *DB) inTx(ctx context.Context, op string, fn func(tx *sql.Tx) error) error {
	return d.txn(ctx, op, true, fn)
}

// txn is inTx, or with serialized false a transaction that relies on row
// locks alone (a drain's claim).
func (d *DB) txn(ctx context.Context, op string, serialized bool, fn func(tx *sql.Tx) error) error {
	tx, err := d.be.begin(ctx, d.db, serialized)
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

// migrationFiles are the schema files of one backend ("migrations" or
// "migrations/postgres"), in version order.
//
// It reads the directory rather than globbing it: every command opens the
// mailbox, and fs.Glob matched every name as a pattern and joined it to
// its directory, 1% of an empty drain. An embedded directory lists in
// name order.
func migrationFiles(dir string) ([]string, error) {
	entries, err := fs.ReadDir(migrations, dir)
	var files []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sql") && !e.IsDir() {
			files = append(files, dir+"/"+e.Name())
		}
	}
	return files, err
}

// Row is a query's one row: *sql.Row, or one read on PostgreSQL's
// listening connection (PostgresListener.QueryRow).
type Row interface {
	Scan(dest ...any) error
}

// querier is what *sql.DB and *sql.Tx share.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// migrate applies the backend's schema files after the database's version,
// in one serialized transaction (inTx), so that two processes opening a
// fresh database at once apply them once: the second waits, then finds the
// schema current. It costs one query when the schema is current.
func (d *DB) migrate(ctx context.Context) error {
	files, err := migrationFiles(d.be.migrationDir())
	if err != nil {
		return err
	}
	current, err := d.openVersion(ctx)
	if err != nil || current == len(files) {
		return err
	}
	return d.inTx(ctx, "migrate mailbox", func(tx *sql.Tx) error {
		if err := d.be.prepareMigration(ctx, tx); err != nil {
			return err
		}
		// Another process may have migrated while we waited for the lock.
		if current, err = d.be.version(ctx, tx); err != nil {
			return err
		}
		if current > len(files) {
			return &Error{Op: "open mailbox", Path: d.path, Kind: ErrTooNew,
				Err: fmt.Errorf("schema version %d, this teamkit knows %d", current, len(files))}
		}
		d.created = current == 0
		if d.created {
			// Tables in a database teamkit has never migrated are another
			// program's: adding ours beside them would make a teamkit
			// mailbox of someone else's file.
			theirs, err := d.be.tables(ctx, tx)
			if err != nil {
				return err
			}
			if len(theirs) > 0 {
				return foreignTables(d.path, theirs)
			}
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
		return d.be.setVersion(ctx, tx, len(files))
	})
}

// openVersion is the schema version as the mailbox opens. A SQLite file
// whose WAL held nothing as it was opened has it in the header openSQLite
// read: what is left to check is that SQLite can open the file (connecting
// reads its schema, so a damaged one fails here, in Open, as before), and
// that costs no statement (each costs a command ~0.1 ms). Any other
// mailbox asks the backend. Either way the answer is the version at one
// moment of the open, as a query's was: a process migrating the file
// afterwards is met by the statements that follow.
func (d *DB) openVersion(ctx context.Context) (int, error) {
	if d.headerVersion == 0 {
		return d.be.version(ctx, d.db)
	}
	c, err := d.db.Conn(ctx)
	if err == nil {
		err = c.Close()
	}
	return d.headerVersion, err
}

// foreignTables is the refusal of a database that holds another program's
// tables (up to five of them named).
func foreignTables(path string, theirs []string) error {
	return &Error{Op: "open mailbox", Path: path, Kind: ErrCorrupt,
		Err: fmt.Errorf("it holds another program's tables: %s", strings.Join(theirs[:min(len(theirs), 5)], ", "))}
}

// SchemaVersion is the migrated schema version (for tests and diagnostics).
func (d *DB) SchemaVersion(ctx context.Context) (int, error) {
	v, err := d.be.version(ctx, d.db)
	return v, d.fail("read schema version", err)
}

// Watch calls check, then again each time the team's mailbox may have
// changed, until check reports done, ctx ends, or the deadline passes
// (ok=false). It is pushed, not polled: SQLite wakes on the database's
// files changing (inotify), PostgreSQL on LISTEN/NOTIFY; each with a slow
// safety poll. A waiter costs nothing while nothing happens, and notices a
// change within milliseconds.
func (d *DB) Watch(ctx context.Context, team string, deadline time.Time, check func() (bool, error)) (ok bool, err error) {
	return d.watch(ctx, topic{team: team}, deadline, check)
}

// WatchInbox is Watch for a check that reads one inbox (team/name) alone:
// on PostgreSQL only a message to that recipient wakes it, not every write
// of the team (another agent's mail, heartbeats), so a busy team's waiters
// do not all re-check on every message. (A SQLite waiter wakes on any
// change to the file, and its check is a local read.)
func (d *DB) WatchInbox(ctx context.Context, team, name string, deadline time.Time, check func() (bool, error)) (ok bool, err error) {
	return d.watch(ctx, topic{team: team, inbox: name}, deadline, check)
}

// topic is what a waiter waits on: a team, or one inbox of it.
type topic struct{ team, inbox string }

// wakes reports whether a notification (payload "team" or
// "team/recipient", migration 010) may concern the waiter.
func (t topic) wakes(payload string) bool {
	if t.inbox != "" {
		return payload == t.team+"/"+t.inbox
	}
	team, _, _ := strings.Cut(payload, "/")
	return team == t.team
}

// inboxLook is what a waiter on the inbox t learns between its checks:
// whether any message to it is unread (else no check of the inbox can find
// anything), and when the first lease held on one runs out (zero: none
// is). A lease's end writes nothing, so no wake-up announces it: the
// waiter looks again then. For a whole team's topic it says unread, and
// no lease, without asking.
func inboxLook(queryRow func(query string, args ...any) Row, t topic, now time.Time) (unread bool, leaseEnd time.Time, err error) {
	if t.inbox == "" {
		return true, time.Time{}, nil
	}
	var n int64
	var end sql.NullInt64
	err = queryRow(`SELECT count(*), min(CASE WHEN lease_until > ? THEN lease_until END) FROM `+unreadByRecipient+`
		WHERE team = ? AND recipient = ? AND read_at IS NULL`, nanos(now), t.team, t.inbox).Scan(&n, &end)
	if err != nil || !end.Valid {
		return n > 0, time.Time{}, err
	}
	return n > 0, fromNanos(end), nil
}

func (d *DB) watch(ctx context.Context, t topic, deadline time.Time, check func() (bool, error)) (ok bool, err error) {
	ok, err = d.be.watch(ctx, (*dbRef)(d), t, deadline, check)
	if err != nil && ctx.Err() == nil {
		return ok, d.fail("watch mailbox", err)
	}
	return ok, err
}

// sleepUntil waits for the first of ctx, the deadline (when set), wake, or
// poll; it reports false when the deadline has passed or ctx ended.
func sleepUntil(ctx context.Context, deadline time.Time, poll time.Duration, wake <-chan struct{}) bool {
	wait := poll
	if !deadline.IsZero() {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		wait = min(wait, left)
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-wake:
	case <-t.C:
	}
	return true
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
