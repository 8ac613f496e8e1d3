package mailbox

import (
	"database/sql"
	"testing"
	"time"
)

// OpenRaw opens the mailbox at path (a file or a postgres:// URL) with
// database/sql alone, bypassing the store, for tests that set up or inspect
// rows; its queries take ? placeholders on either backend, as the store's do.
func OpenRaw(path string) (*sql.DB, error) {
	if !IsPostgres(path) {
		return sql.Open("sqlite", "file:"+path+"?_busy_timeout=5000&_journal_mode=WAL")
	}
	c, _, err := pgClient.Connector(path, PostgresOptions{ConnectTimeout: DefaultConnectTimeout, LockTimeout: DefaultBusyTimeout, Rebind: rebind})
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}

// Rebind is rebind, for its unit test.
var Rebind = rebind

// NoSafetyPolls switches the backends' slow re-check off (an hour) until
// the test ends, so a waiter that wakes can only have been woken by the
// change itself.
func NoSafetyPolls(t testing.TB) { SafetyPolls(t, time.Hour) }

// SafetyPolls sets both backends' slow re-check to every d until the test
// ends.
func SafetyPolls(t testing.TB, d time.Duration) {
	lite, pg := sqliteSafetyPoll, pgSafetyPoll
	sqliteSafetyPoll, pgSafetyPoll = d, d
	t.Cleanup(func() { sqliteSafetyPoll, pgSafetyPoll = lite, pg })
}

// QuietLimit sets how long a statement on PostgreSQL's listening
// connection may go unanswered until the test ends.
func QuietLimit(t testing.TB, d time.Duration) {
	old := pgQuietLimit
	pgQuietLimit = d
	t.Cleanup(func() { pgQuietLimit = old })
}

// StaleQuery is staleQuery, for the plan tests.
var StaleQuery = staleQuery

// SendSettle sets how long a send whose answer was lost keeps settling it,
// until the test ends.
func SendSettle(t testing.TB, d time.Duration) {
	was := sendSettle
	sendSettle = d
	t.Cleanup(func() { sendSettle = was })
}
