package pgdriver

import (
	"database/sql"
	"net"
	"testing"
	"time"

	"github.com/teamkit/teamkit/pkg/mailbox"
)

// Open opens the database at url with the connector the mailbox uses.
func Open(url string) (*sql.DB, error) {
	c, _, err := client{}.Connector(url, mailbox.PostgresOptions{
		ConnectTimeout: mailbox.DefaultConnectTimeout, LockTimeout: mailbox.DefaultBusyTimeout,
		Rebind: func(q string) string { return q }})
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}

// QuickSilence shortens dial.go's limits to a few seconds for t.
func QuickSilence(t *testing.T) {
	ka, ut := keepAlive, userTimeout
	keepAlive = net.KeepAliveConfig{Enable: true, Idle: time.Second, Interval: time.Second, Count: 2}
	userTimeout = 2 * time.Second
	t.Cleanup(func() { keepAlive, userTimeout = ka, ut })
}
