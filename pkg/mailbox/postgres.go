package mailbox

// The PostgreSQL backend: one team mailbox shared by many hosts.

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

type pgBackend struct{}

// PostgresClient is the PostgreSQL wire client the backend runs over:
// pgx, registered by package pgdriver. It is an interface so that a binary
// for SQLite mailboxes does not link pgx, TLS and x509 and run their
// initializers at every start (docs/BENCHMARKS.md).
type PostgresClient interface {
	// Connector parses a postgres:// URL into a database/sql connector
	// whose connections pass each query through o.Rebind, and returns the
	// URL's password (to scrub it from errors). Its error never quotes
	// the password.
	Connector(rawURL string, o PostgresOptions) (c driver.Connector, password string, err error)
	// ErrorCode is the SQLSTATE of a server's error, or "".
	ErrorCode(err error) string
	// ConnectPhase says where a connection that never began its session
	// failed: PhaseUnreachable, PhaseTLS or PhaseLogin; "" when err is
	// not such a failure.
	ConnectPhase(err error) string
	// SafeToRetry reports an error that came before the statement could
	// reach the server, so nothing of it happened.
	SafeToRetry(err error) bool
	// Closed reports a statement that found its connection closed by a
	// failure earlier in the same operation, after a request may have
	// reached the server (a transaction's COMMIT, say, after the answer
	// to what it sent before was cut off).
	Closed(err error) bool
	// Listen LISTENs on channel on a connection (what sql.Conn.Raw
	// hands out).
	Listen(ctx context.Context, conn any, channel string) (PostgresListener, error)
}

// PostgresListener is a connection that LISTENs.
type PostgresListener interface {
	// Wait waits up to d for a notification: its payload and true, or
	// false when d passed. An error means the connection is lost (or ctx
	// ended).
	Wait(ctx context.Context, d time.Duration) (payload string, ok bool, err error)
	// Unlisten ends every LISTEN, so the connection can go back to the
	// pool.
	Unlisten(ctx context.Context) error
	// QueryRow runs a query of one row on the listening connection (with
	// the store's rebind), between waits.
	QueryRow(ctx context.Context, query string, args ...any) Row
}

// PostgresOptions are teamkit's connection settings for PostgresClient.
type PostgresOptions struct {
	// ConnectTimeout bounds a connection attempt when the URL sets no
	// connect_timeout.
	ConnectTimeout time.Duration
	// LockTimeout is the server's lock_timeout (the busy timeout).
	LockTimeout time.Duration
	// Rebind turns each query's portable SQL into PostgreSQL's.
	Rebind func(string) string
}

// pgClient is the registered client; nil in a binary without one.
var pgClient PostgresClient

// RegisterPostgres makes c the PostgreSQL client (package pgdriver calls
// it when imported).
func RegisterPostgres(c PostgresClient) { pgClient = c }

// HasPostgres reports whether this binary can open a postgres:// mailbox.
func HasPostgres() bool { return pgClient != nil }

// DefaultConnectTimeout bounds a connection attempt when the URL sets no
// connect_timeout: a command run by cron should fail, not hang.
const DefaultConnectTimeout = 10 * time.Second

func openPostgres(rawURL string, o Options) (*DB, error) {
	display := redact(rawURL)
	if pgClient == nil {
		return nil, &Error{Op: "open mailbox", Path: display, Kind: ErrBackend,
			Err: errors.New("this program was built without the PostgreSQL client")}
	}
	conn, password, err := pgClient.Connector(rawURL, PostgresOptions{
		ConnectTimeout: DefaultConnectTimeout, LockTimeout: o.BusyTimeout, Rebind: rebind})
	if err != nil {
		return nil, &Error{Op: "open mailbox", Path: display, Kind: ErrBadURL, Err: err, secret: password}
	}
	// Not pinged: the schema's version, read next, is the first round
	// trip, and says as well that the server cannot be reached.
	return &DB{db: sql.OpenDB(conn), be: pgBackend{}, path: display, now: o.Now, secret: password}, nil
}

func (pgBackend) name() string { return "postgres" }

// clock is the server's time: every host's agents are stamped and judged by
// this one clock, however far the hosts' own clocks drift.
func (pgBackend) clock() string {
	return `(extract(epoch FROM clock_timestamp()) * 1000000000)::bigint`
}

func (pgBackend) kindOf(err error) error { return pgKind(err) }

// writeLock is the key of the advisory lock that serializes inTx across
// every connection to this schema, as SQLite's write lock does.
const writeLock = `SELECT pg_advisory_xact_lock(hashtextextended('teamkit/' || current_schema() || '/write', 0))`

func (pgBackend) sendLock() string {
	return `SELECT pg_advisory_xact_lock(hashtextextended('teamkit/' || current_schema() || '/send/' || ?, 0))`
}

func (pgBackend) begin(ctx context.Context, db *sql.DB, serialized bool) (*sql.Tx, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil || !serialized {
		return tx, err
	}
	if _, err := tx.ExecContext(ctx, writeLock); err != nil {
		tx.Rollback()
		return nil, err
	}
	return tx, nil
}

// claim is one statement, one round trip. Its subquery, run once before the
// update (an InitPlan: the update then finds its ids by primary key), locks
// the rows it selects and skips rows another drain is claiming at that
// moment, so drains on any number of hosts proceed side by side and never
// share a message; and it leases exactly the rows it got (a range would
// take a skipped row). A row whose claim committed meanwhile is re-checked
// against the lease condition once its lock is free, and left out. On a
// read-only standby the UPDATE fails, empty inbox or not.
func (pgBackend) claim(ctx context.Context, db *sql.DB, now func() time.Time, claiming func(), from, where string, args []any, limit int, token int64, lease time.Duration) ([]Message, error) {
	// Before the statement, which commits the lease as it returns: there
	// is no moment between the two to call it in.
	claiming()
	at := now().UTC()
	msgs, err := queryMessages(ctx, db,
		`UPDATE messages SET claim_token = ?, lease_until = ?
		WHERE id = ANY(ARRAY(SELECT id FROM `+from+` WHERE `+where+` ORDER BY id`+limitClause(limit)+` FOR UPDATE SKIP LOCKED))
		RETURNING `+messageCols,
		append(append([]any{token, nanos(at.Add(lease))}, args...), nanos(at))...)
	// RETURNING keeps no order.
	slices.SortFunc(msgs, func(a, b Message) int { return cmp.Compare(a.ID, b.ID) })
	return msgs, err
}

func (pgBackend) migrationDir() string { return "migrations/postgres" }

// The version is the one row of table teamkit_schema.
func (pgBackend) version(ctx context.Context, q querier) (int, error) {
	var v int
	err := q.QueryRowContext(ctx, `SELECT version FROM teamkit_schema`).Scan(&v)
	switch {
	case pgClient.ErrorCode(err) == "42P01": // undefined_table: a fresh database
		return 0, nil
	case errors.Is(err, sql.ErrNoRows):
		return 0, nil
	}
	return v, err
}

// prepareMigration makes sure the version table exists. migrate's inTx
// holds the write lock (a transaction advisory lock), and PostgreSQL's DDL
// is transactional, so a failed migration leaves nothing behind.
//
// It first refuses a schema whose name is too long for teamkit's
// notifications: their channel is teamkit.<schema> (migration 010,
// listenOnce), and PostgreSQL's channel names, identifiers, are at most
// 63 bytes. With a longer one the schema would be made, then every write
// fail at its trigger's NOTIFY.
func (pgBackend) prepareMigration(ctx context.Context, tx *sql.Tx) error {
	var schema string // "" when search_path names no schema: CREATE TABLE says so
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(current_schema(), '')`).Scan(&schema); err != nil {
		return err
	}
	if schema != "" && len(notifyPrefix)+len(schema) > maxIdentifier {
		return fmt.Errorf("schema %q is %d bytes long: teamkit's notification channel, %s<schema>, must fit PostgreSQL's %d bytes, so the schema's name may be at most %d bytes",
			schema, len(schema), notifyPrefix, maxIdentifier, maxIdentifier-len(notifyPrefix))
	}
	_, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS teamkit_schema (version integer NOT NULL)`)
	return err
}

// notifyPrefix begins every notification channel's name; maxIdentifier is
// PostgreSQL's longest name (NAMEDATALEN - 1).
const (
	notifyPrefix  = "teamkit."
	maxIdentifier = 63
)

func (pgBackend) setVersion(ctx context.Context, tx *sql.Tx, v int) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM teamkit_schema`); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO teamkit_schema (version) VALUES (?)`, v)
	return err
}

// lock is a session advisory lock on a connection taken out of the pool
// for as long as the lock is held. The server releases it when the session
// ends: the holder exits or dies, or its host drops off the network (once
// the server gives up on the silent connection: about a minute, with
// the limits package pgdriver asks it for).
func (pgBackend) lock(r *dbRef, team, key string) (*Lock, error) {
	d := (*DB)(r)
	var conn *sql.Conn
	name := team + "/" + key
	l := &Lock{}
	l.tryLock = func() (bool, error) {
		ctx := context.Background()
		c, err := d.db.Conn(ctx)
		if err != nil {
			return false, d.fail("lock "+name, err)
		}
		var ok bool
		if err := c.QueryRowContext(ctx,
			`SELECT pg_try_advisory_lock(hashtextextended('teamkit/' || current_schema() || '/lock/' || ?, 0))`, name).Scan(&ok); err != nil {
			c.Close()
			return false, d.fail("lock "+name, err)
		}
		if !ok {
			c.Close()
			return false, nil
		}
		conn = c
		return true, nil
	}
	l.unlock = func() error {
		c := conn
		conn = nil
		_, err := c.ExecContext(context.Background(),
			`SELECT pg_advisory_unlock(hashtextextended('teamkit/' || current_schema() || '/lock/' || ?, 0))`, name)
		if err != nil {
			// Never hand a connection that may still hold the lock back
			// to the pool: discard it, which ends the session.
			c.Raw(func(any) error { return driver.ErrBadConn })
		}
		c.Close()
		return d.fail("unlock "+name, err)
	}
	return l, nil
}

// pgSafetyPoll is how often a waiter looks without a notification: the
// backstop for a listening connection that died without a word (a host or
// a network gone silent), whose notifications stop with no error. (A
// reconnected waiter checks before it waits, so nothing sent while it was
// away is missed; a lease running out is looked for when it runs out.) At
// 5 s, with its check's transaction each time, an idle waiter cost
// 0.035–0.051% of a core on a machine where a wake-up is dear. (A variable
// only so that a test can switch it off.)
var pgSafetyPoll = 10 * time.Second

// pgQuietLimit is how long a statement on the listening connection (a
// look between waits, the UNLISTEN at the end) may go unanswered before
// the connection counts as lost: one that went silent answers never, and
// TCP gives up only after many minutes. (A variable only so that a test
// can shorten it.)
var pgQuietLimit = 5 * time.Second

// watch LISTENs on the schema's channel, to which every write to a table
// a waiter cares about notifies (the triggers of migrations 001 and 010:
// "team" for most tables, "team/recipient" for a message), and re-checks
// when a notification for it arrives (topic.wakes).
//
// A server restart does not end the wait: whatever fails for want of the
// server (the LISTEN connection, a check's query) is retried with backoff
// until the deadline, and once listening again the check runs first, so
// nothing sent while the connection was down is missed. Only when the
// deadline passes with the server still away does the error come out.
func (pgBackend) watch(ctx context.Context, r *dbRef, t topic, deadline time.Time, check func() (bool, error)) (bool, error) {
	d := (*DB)(r)
	backoff := minBackoff
	for {
		began := time.Now()
		done, err := listenOnce(ctx, d, t, deadline, check)
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		if err == nil || !Disconnected(err) {
			return done, err
		}
		if time.Since(began) > maxBackoff {
			backoff = minBackoff // it was listening: a fresh outage
		}
		if !sleepUntil(ctx, deadline, backoff, nil) {
			if ctx.Err() != nil {
				return false, ctx.Err()
			}
			return false, err
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// A waiter reconnects after minBackoff, then ever less often, up to
// maxBackoff apart: a restart takes a second or two, and a hundred waiters
// must not hammer a server that is coming up.
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 2 * time.Second
)

var errListenLost = errors.New("lost the listening connection")

func listenOnce(ctx context.Context, d *DB, t topic, deadline time.Time, check func() (bool, error)) (done bool, err error) {
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return false, fmt.Errorf("%w: %w", errListenLost, err)
	}
	defer conn.Close()
	var channel string
	if err := conn.QueryRowContext(ctx, `SELECT '`+notifyPrefix+`' || current_schema()`).Scan(&channel); err != nil {
		return false, fmt.Errorf("%w: %w", errListenLost, err)
	}
	// waited is how the wait ended, whatever becomes of its connection.
	var listened bool
	var waited error
	err = conn.Raw(func(dc any) (err error) {
		l, err := pgClient.Listen(ctx, dc, channel)
		if err != nil {
			return fmt.Errorf("%w: %w", errListenLost, err)
		}
		listened = true
		// However the wait ends (its check's error, ctx, the deadline),
		// the connection goes back to the pool listening to nothing, or
		// is closed: one still listening would gather the schema's every
		// notification, never read. UNLISTEN gets pgQuietLimit, not for
		// ever: the connection may have gone silent. An interrupted wait
		// (ctx ended: Ctrl-C, a stopping watch) closes it at once instead.
		defer func() {
			waited = err
			if errors.Is(err, driver.ErrBadConn) {
				return
			}
			if ctx.Err() != nil {
				err = driver.ErrBadConn
				return
			}
			uctx, cancel := context.WithTimeout(context.Background(), pgQuietLimit)
			defer cancel()
			if l.Unlisten(uctx) != nil {
				err = driver.ErrBadConn // Raw closes it
			}
		}()
		for {
			if done, err = check(); err != nil || done {
				return err
			}
			var again bool
			if again, err = awaitChange(ctx, d, l, t, deadline); err != nil || !again {
				return err
			}
		}
	})
	if listened {
		err = waited
	}
	if errors.Is(err, driver.ErrBadConn) {
		return false, errListenLost
	}
	return done, err
}

// awaitChange reports, true, that the waiter on t should check again: a
// notification for it came, the first lease on its inbox ran out (which
// notifies nobody), or a safety poll found mail unread there (a team's
// waiter re-checks on every poll); false, that the deadline passed first.
// The poll runs from the check, not from the last notification: others'
// (another inbox, another team, a heartbeat) must not put it off again and
// again. An idle waiter's poll is one query on the listening connection,
// not its check's transaction on a pooled one (which a pooled connection
// idle for a second precedes with a ping).
func awaitChange(ctx context.Context, d *DB, l PostgresListener, t topic, deadline time.Time) (bool, error) {
	poll := time.Now().Add(pgSafetyPoll)
	// A look may wait for its answer until the deadline and pgQuietLimit at
	// most: the connection it asks on may be the one that went silent.
	// Unanswered, it is lost (pgx closes it), and a reconnected waiter
	// checks before it waits.
	look := func() (unread bool, leased time.Time, err error) {
		lctx, cancel := context.WithTimeout(ctx, pgQuietLimit)
		defer cancel()
		if !deadline.IsZero() {
			lctx, cancel = context.WithDeadline(lctx, deadline)
			defer cancel()
		}
		unread, leased, err = inboxLook(func(q string, args ...any) Row { return l.QueryRow(lctx, q, args...) }, t, d.now())
		if err != nil && ctx.Err() == nil && (lctx.Err() != nil || Disconnected(err)) {
			err = driver.ErrBadConn
		}
		return unread, leased, err
	}
	_, leased, err := look()
	for {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if !leased.IsZero() && !d.now().Before(leased) {
			return true, nil
		}
		if !time.Now().Before(poll) {
			var unread bool
			if unread, leased, err = look(); err != nil {
				continue
			}
			if unread {
				return true, nil
			}
			poll = time.Now().Add(pgSafetyPoll)
		}
		wait := time.Until(poll)
		if !leased.IsZero() {
			wait = min(wait, leased.Sub(d.now()))
		}
		if !deadline.IsZero() {
			wait = min(wait, time.Until(deadline))
		}
		payload, ok, werr := l.Wait(ctx, max(wait, 0))
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		if werr != nil {
			return false, driver.ErrBadConn
		}
		if ok && t.wakes(payload) {
			return true, nil
		}
	}
}

func (pgBackend) tables(ctx context.Context, tx *sql.Tx) ([]string, error) {
	return queryStrings(ctx, tx, `SELECT tablename::text FROM pg_tables
		WHERE schemaname = current_schema() AND tablename != ? ORDER BY tablename`, versionTable)
}

// identityColumns lists the identity columns as "table.column".
func identityColumns(ctx context.Context, tx *sql.Tx) ([]string, error) {
	return queryStrings(ctx, tx, `SELECT table_name::text || '.' || column_name::text FROM information_schema.columns
		WHERE table_schema = current_schema() AND is_identity = 'YES'`)
}

// lastIDs is, per identity sequence, the last id it handed out (0 when
// never used). A sequence that afterCopy set (is_called false, last_value
// the next id) has handed out the one before last_value, though it has
// never been called: pg_sequence_last_value says NULL for it, and a copy of
// a copy reused the ids of the first mailbox.
func (pgBackend) lastIDs(ctx context.Context, tx *sql.Tx) (map[string]int64, error) {
	cols, err := identityColumns(ctx, tx)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, tc := range cols {
		t, c, _ := strings.Cut(tc, ".")
		var seq string
		if err := tx.QueryRowContext(ctx, `SELECT pg_get_serial_sequence(?, ?)`, t, c).Scan(&seq); err != nil {
			return nil, err
		}
		var n int64
		if err := tx.QueryRowContext(ctx, `SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM `+seq).Scan(&n); err != nil {
			return nil, err
		}
		out[t] = n
	}
	return out, nil
}

// afterCopy moves each identity column's sequence past the largest id
// copied in and the source's last id, so the next message or ask gets an
// id never handed out before.
func (pgBackend) afterCopy(ctx context.Context, tx *sql.Tx, last map[string]int64) error {
	cols, err := identityColumns(ctx, tx)
	if err != nil {
		return err
	}
	for _, tc := range cols {
		t, c, _ := strings.Cut(tc, ".")
		if _, err := tx.ExecContext(ctx, `SELECT setval(pg_get_serial_sequence(?, ?), greatest(coalesce((SELECT max(`+c+`) FROM `+t+`), 0), ?::bigint) + 1, false)`, t, c, last[t]); err != nil {
			return err
		}
	}
	return nil
}

// rebind turns the store's portable SQL into PostgreSQL's: each ? outside
// quotes and comments becomes $1, $2, …, and SQLite's planner hint
// "INDEXED BY name" is dropped (PostgreSQL's planner has statistics and no
// such hint). Dollar-quoted bodies ($$ … $$, in the migrations) are kept
// as they are.
func rebind(q string) string {
	if !strings.ContainsAny(q, "?") && !strings.Contains(q, "INDEXED BY") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(q) && q[j] != c {
				j++
			}
			b.WriteString(q[i:min(j+1, len(q))])
			i = j + 1
		case c == '-' && strings.HasPrefix(q[i:], "--"):
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				j = len(q) - i
			}
			b.WriteString(q[i : i+j])
			i += j
		case c == '/' && strings.HasPrefix(q[i:], "/*"):
			j := strings.Index(q[i+2:], "*/")
			end := len(q)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			b.WriteString(q[i:end])
			i = end
		case c == '$' && strings.HasPrefix(q[i:], "$$"):
			j := strings.Index(q[i+2:], "$$")
			end := len(q)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			b.WriteString(q[i:end])
			i = end
		case c == '?':
			n++
			fmt.Fprintf(&b, "$%d", n)
			i++
		case c == ' ' && strings.HasPrefix(q[i:], " INDEXED BY "):
			// " INDEXED BY name": skip the hint and the index name.
			j := i + len(" INDEXED BY ")
			for j < len(q) && (q[j] == '_' || q[j] >= 'a' && q[j] <= 'z' || q[j] >= '0' && q[j] <= '9') {
				j++
			}
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}
