// Package pgdriver is the PostgreSQL client of package mailbox: pgx behind
// database/sql. A binary that serves postgres:// mailboxes imports it for
// its side effect,
//
//	import _ "github.com/teamkit/teamkit/pkg/mailbox/pgdriver"
//
// and a binary that does not never links pgx, its type tables, TLS nor
// x509, so it pays neither their package initializers nor their pages at
// start-up (docs/BENCHMARKS.md). inbox, stale and ready are such binaries:
// they hand a postgres:// mailbox to teamkit-postgres (package command).
//
// Public: a Go program embedding teamkit may import this package.
package pgdriver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/teamkit/teamkit/pkg/mailbox"
)

func init() { mailbox.RegisterPostgres(client{}) }

type client struct{}

// Connector parses the URL and applies teamkit's defaults to what it
// leaves unset.
func (client) Connector(rawURL string, o mailbox.PostgresOptions) (driver.Connector, string, error) {
	cfg, err := pgx.ParseConfig(rawURL)
	if err != nil {
		// pgconn's parse error quotes the URL, password hidden; what it
		// wraps says what is wrong without it.
		if inner := errors.Unwrap(err); inner != nil {
			err = inner
		}
		return nil, "", err
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = o.ConnectTimeout
	}
	// pgconn bounds the connection attempt itself (ConnectTimeout); the
	// dial adds the limits on a connection that goes silent (dial.go).
	cfg.DialFunc = dial
	serverParams(cfg.RuntimeParams)
	if _, ok := cfg.RuntimeParams["application_name"]; !ok {
		cfg.RuntimeParams["application_name"] = "teamkit"
	}
	// The busy timeout is how long a statement waits for a lock (another
	// process's serialized transaction, a row it holds).
	cfg.RuntimeParams["lock_timeout"] = fmt.Sprint(o.LockTimeout.Milliseconds())
	// The mailbox is built on read committed: its claims skip the rows
	// another drain has locked, its serialized writes take an advisory
	// lock. A database (or a URL) that makes every transaction repeatable
	// read or serializable would fail drains side by side with
	// serialization errors instead; teamkit's sessions are read committed
	// whatever the default.
	cfg.RuntimeParams["default_transaction_isolation"] = "read committed"
	if !strings.Contains(rawURL, "default_query_exec_mode") {
		// Every command is a short process that runs each query once or
		// twice: one round trip each, instead of prepare-then-execute.
		cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	}
	// rebindConn pings a reused connection itself (ResetSession).
	noPing := stdlib.OptionShouldPing(func(context.Context, stdlib.ShouldPingParams) bool { return false })
	return rebindConnector{stdlib.GetConnector(*cfg, noPing), o.Rebind}, cfg.Password, nil
}

func (client) ErrorCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

func (client) SafeToRetry(err error) bool { return pgconn.SafeToRetry(err) }

func (client) Closed(err error) bool { return errors.Is(err, pgconn.ErrConnClosed) }

func (client) ConnectPhase(err error) string {
	var ce *pgconn.ConnectError
	if !errors.As(err, &ce) {
		return ""
	}
	var (
		certErr   *tls.CertificateVerificationError
		unknownCA x509.UnknownAuthorityError
		hostErr   x509.HostnameError
		recordErr tls.RecordHeaderError
		msg       = ce.Error()
	)
	switch {
	case strings.Contains(msg, "tls error: "), errors.As(err, &certErr), errors.As(err, &unknownCA),
		errors.As(err, &hostErr), errors.As(err, &recordErr):
		return mailbox.PhaseTLS
	case strings.Contains(msg, "password"), strings.Contains(msg, "SASL"):
		return mailbox.PhaseLogin
	}
	// Refused, unresolvable, or some other failure before the session
	// began (a protocol error): reaching the server is the first thing to
	// check.
	return mailbox.PhaseUnreachable
}

// Listen runs LISTEN on the connection sql.Conn.Raw hands out.
func (client) Listen(ctx context.Context, dc any, channel string) (mailbox.PostgresListener, error) {
	rc := dc.(*rebindConn)
	pc := rc.Conn.Conn()
	if _, err := pc.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return nil, err
	}
	return listener{pc, rc.rebind}, nil
}

type listener struct {
	pc     *pgx.Conn
	rebind func(string) string
}

func (l listener) QueryRow(ctx context.Context, q string, args ...any) mailbox.Row {
	return l.pc.QueryRow(ctx, l.rebind(q), args...)
}

func (l listener) Wait(ctx context.Context, d time.Duration) (string, bool, error) {
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	n, err := l.pc.WaitForNotification(wctx)
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) && !l.pc.IsClosed() {
			return "", false, nil
		}
		return "", false, err
	}
	return n.Payload, true, nil
}

func (l listener) Unlisten(ctx context.Context) error {
	_, err := l.pc.Exec(ctx, "UNLISTEN *")
	return err
}

// rebindConnector hands out connections that rebind each query.
type rebindConnector struct {
	driver.Connector
	rebind func(string) string
}

func (c rebindConnector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &rebindConn{dc.(*stdlib.Conn), c.rebind, time.Now()}, nil
}

// rebindConn is pgx's database/sql connection with every query passed
// through the store's rebind on its way in, so the store's queries are
// written once. Embedding keeps every optional driver interface pgx
// implements.
type rebindConn struct {
	*stdlib.Conn
	rebind func(string) string
	used   time.Time // connected, or last taken from the pool
}

// ResetSession runs as database/sql takes the connection from its pool
// again. One idle over a second may have been cut (a server restart, a
// network path gone), so it is pinged first, and a dead one is replaced
// rather than fail the statement, as pgx does; but pgx counts a connection
// never reused as idle since the year 1, so every command paid a ping, a
// round trip, for the connection it had just made.
func (c *rebindConn) ResetSession(ctx context.Context) error {
	if time.Since(c.used) > time.Second {
		if err := c.Conn.Ping(ctx); err != nil {
			return err // driver.ErrBadConn
		}
	}
	c.used = time.Now()
	return c.Conn.ResetSession(ctx)
}

func (c *rebindConn) Prepare(q string) (driver.Stmt, error) { return c.Conn.Prepare(c.rebind(q)) }

func (c *rebindConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	return c.Conn.PrepareContext(ctx, c.rebind(q))
}

func (c *rebindConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.ExecContext(ctx, c.rebind(q), args)
}

func (c *rebindConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.QueryContext(ctx, c.rebind(q), args)
}
