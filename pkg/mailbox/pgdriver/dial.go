package pgdriver

import (
	"context"
	"net"
	"strconv"
	"syscall"
	"time"
)

// A network gone silent (a VPN dropped, a laptop's Wi-Fi gone, a host
// pulled off the network) closes no connection: nothing comes back, not
// even a reset. Left to the operating system's defaults, a command whose
// statement was on its way waited for TCP's retransmissions to give up,
// about 15 minutes on Linux, and one waiting for an answer for Go's
// keepalive, 2.5 minutes; the server kept an idle vanished client's
// session, and the locks it held (a send lock, an agent's spawn lock), for
// its keepalive's default of over two hours. A command now gives a silent
// server about half a minute, and the server a silent idle client about
// one (serverParams). A live peer's kernel acknowledges data and answers
// keepalive probes whatever its process is doing, so a long statement or
// a long wait is never cut short: only silence is, and a server that stops
// reading our statement for the user timeout (Linux, 5.11 on, drops a
// connection whose peer's receive window stays shut that long), which a
// PostgreSQL backend does not do while it lives.
var (
	// keepAlive is the probing of an idle connection: the first probe
	// after Idle, then every Interval, the connection dropped after Count
	// unanswered. Where the user timeout is set, Linux drops it instead
	// once userTimeout has passed with a probe unanswered, whatever the
	// count.
	keepAlive = net.KeepAliveConfig{Enable: true, Idle: 10 * time.Second, Interval: 5 * time.Second, Count: 4}
	// userTimeout drops a connection whose data (a statement, an answer,
	// a probe) has gone unacknowledged this long: keepalive never fires
	// while data is unacknowledged. Set where the platform has the option
	// (setUserTimeout).
	userTimeout = 30 * time.Second
)

// dial connects as pgconn's default dialer does, with the limits above.
func dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d := net.Dialer{KeepAliveConfig: keepAlive, Control: func(network, _ string, c syscall.RawConn) error {
		if network == "tcp4" || network == "tcp6" {
			// Best effort: a system (or Wine) without the option
			// still has keepalive, and the dial must not fail for it.
			c.Control(func(fd uintptr) { setUserTimeout(fd, userTimeout) })
		}
		return nil
	}}
	return d.DialContext(ctx, network, addr)
}

// serverParams asks the server to probe its side of the session as we do,
// as runtime parameters (every PostgreSQL has them): an idle client gone
// silent is dropped after the first probe and its system's count of them
// (9 on Linux: about a minute). Not the count itself (PostgreSQL on
// Windows has no such option and would log a line for every connection
// that set one), nor the server's tcp_user_timeout: PostgreSQL before 12
// refuses it, every server but Linux's logs a line for each connection,
// and a Linux server would drop a client that left a large result unread
// for 30 s (inbox copy streams its source while it writes, a process may
// be stopped by Ctrl-Z). A URL that sets one keeps its own; set empty
// (tcp_keepalives_idle=) it is not sent, for a pooler that refuses unknown
// startup parameters (docs/SCALING.md).
func serverParams(params map[string]string) {
	for k, v := range map[string]string{
		"tcp_keepalives_idle":     strconv.Itoa(int(keepAlive.Idle / time.Second)),
		"tcp_keepalives_interval": strconv.Itoa(int(keepAlive.Interval / time.Second)),
	} {
		if set, ok := params[k]; !ok {
			params[k] = v
		} else if set == "" {
			delete(params, k)
		}
	}
}
