package mailbox

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
)

// Disconnected reports whether err is the connection to a PostgreSQL
// server failing rather than a statement: the server restarting or shutting
// down (57P01–57P03), the connection refused or broken, the session cut.
// A wait rides such an error out (it reconnects until its deadline); any
// other error ends it. SQLite has no connection to lose, and a binary
// without the PostgreSQL client has no server to lose it to.
func Disconnected(err error) bool {
	if err == nil || pgClient == nil || errors.As(err, new(delivered)) {
		return false
	}
	if code := pgClient.ErrorCode(err); code != "" {
		switch code {
		case "57P01", "57P02", "57P03": // admin_shutdown, crash_shutdown, cannot_connect_now
			return true
		}
		return len(code) == 5 && strings.HasPrefix(code, "08") // connection_exception
	}
	var ne net.Error
	return pgClient.ConnectPhase(err) != "" || errors.As(err, &ne) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, errListenLost) ||
		pgClient.SafeToRetry(err) || pgClient.Closed(err)
}

// ConnectTimedOut reports whether err is a connection to a PostgreSQL
// server that went unanswered for the connect timeout: a server that is
// there but busy (each new connection is a backend process for it to
// start, and a burst of spawns opens dozens at once), where a refusal is
// ErrConnect at once.
func ConnectTimedOut(err error) bool {
	var ne net.Error
	return errors.Is(err, ErrConnect) && (errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout())
}
