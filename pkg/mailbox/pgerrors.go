package mailbox

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// What can go wrong reaching and using a PostgreSQL mailbox, beyond what
// the SQLite sentinels say, each with its own way out (Error.Hint).
var (
	ErrPermission = errors.New("permission denied in the database")
	ErrNoDatabase = errors.New("the database does not exist")
	ErrTLS        = errors.New("the TLS handshake with the database server failed")
)

// pgKind classifies a PostgreSQL error by its SQLSTATE, or, for a
// connection that never got as far as one, by the phase it failed in:
// reaching the server, TLS, or the login. nil when it is none of these.
func pgKind(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "55P03", "40P01": // lock_not_available, deadlock_detected
			return ErrLocked
		case "25006": // read_only_sql_transaction: a standby
			return ErrReadOnly
		case "42501": // insufficient_privilege: on the schema, a table, the database
			return ErrPermission
		case "3D000": // invalid_catalog_name
			return ErrNoDatabase
		case "28P01", "28000": // invalid_password, invalid_authorization_specification (pg_hba.conf)
			return ErrAuth
		case "42P07", "42701": // duplicate_table, duplicate_column: someone else's tables
			return ErrCorrupt
		}
		return nil
	}
	var ce *pgconn.ConnectError
	if !errors.As(err, &ce) {
		return nil
	}
	var (
		certErr    *tls.CertificateVerificationError
		unknownCA  x509.UnknownAuthorityError
		hostErr    x509.HostnameError
		recordErr  tls.RecordHeaderError
		dnsErr     *net.DNSError
		opErr      *net.OpError
		msg        = ce.Error()
		tlsPhase   = strings.Contains(msg, "tls error: ")
		authPhrase = strings.Contains(msg, "password") || strings.Contains(msg, "SASL")
	)
	switch {
	case tlsPhase, errors.As(err, &certErr), errors.As(err, &unknownCA), errors.As(err, &hostErr), errors.As(err, &recordErr):
		return ErrTLS
	case authPhrase:
		return ErrAuth
	case errors.As(err, &dnsErr), errors.As(err, &opErr):
		return ErrConnect
	}
	// Some other failure before the session began (a protocol error):
	// reaching the server is still the first thing to check.
	return ErrConnect
}
