package mailbox

import (
	"database/sql/driver"
	"errors"
	"io"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
)

// Disconnected reports whether err is the connection to a PostgreSQL
// server failing rather than a statement: the server restarting or shutting
// down (57P01–57P03), the connection refused or broken, the session cut.
// A wait rides such an error out (it reconnects until its deadline); any
// other error ends it. SQLite has no connection to lose.
func Disconnected(err error) bool {
	if err == nil {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "57P01", "57P02", "57P03": // admin_shutdown, crash_shutdown, cannot_connect_now
			return true
		}
		return len(pe.Code) == 5 && pe.Code[:2] == "08" // connection_exception
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, errListenLost) ||
		pgconn.SafeToRetry(err)
}
