package mailbox

import "errors"

// What can go wrong reaching and using a PostgreSQL mailbox, beyond what
// the SQLite sentinels say, each with its own way out (Error.Hint).
var (
	ErrPermission = errors.New("permission denied in the database")
	ErrNoDatabase = errors.New("the database does not exist")
	ErrTLS        = errors.New("the TLS handshake with the database server failed")
	ErrBadURL     = errors.New("the postgres:// URL is not valid")
	ErrNotUTF8    = errors.New("a value holds bytes that are not UTF-8, which PostgreSQL does not store")
)

// The phases a PostgreSQL connection can fail in before its session
// begins (PostgresClient.ConnectPhase).
const (
	PhaseUnreachable = "unreachable"
	PhaseTLS         = "tls"
	PhaseLogin       = "login"
)

// pgKind classifies a PostgreSQL error by its SQLSTATE, or, for a
// connection that never got as far as one, by the phase it failed in:
// reaching the server, TLS, or the login. nil when it is none of these.
func pgKind(err error) error {
	if code := pgClient.ErrorCode(err); code != "" {
		switch code {
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
		case "22021", "22P05": // character_not_in_repertoire (an invalid byte sequence), untranslatable_character
			return ErrNotUTF8
		}
		return nil
	}
	switch pgClient.ConnectPhase(err) {
	case PhaseTLS:
		return ErrTLS
	case PhaseLogin:
		return ErrAuth
	case PhaseUnreachable:
		return ErrConnect
	}
	return nil
}
