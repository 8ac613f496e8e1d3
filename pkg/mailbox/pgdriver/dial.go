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
// keepalive, 2.5 minutes; the server kept a vanished client's session,
// and the locks it held (a send lock, an agent's spawn lock), for 15
// minutes or, idle, for its keepalive's default of over two hours. Both
// ends now give a silent peer about half a minute. A live peer's kernel
// acknowledges data and answers keepalive probes whatever its process is
// doing, so a long statement or a long wait is never cut short: only
// silence is, and a peer that stops reading. Linux (5.11 on) also drops a
// connection whose peer's receive window has stayed shut for the user
// timeout, answered probes or not: a process that leaves a large result
// unread for 30 s (stopped by Ctrl-Z, or inbox copy writing a batch of
// its source's rows to a slow target) loses the connection to the
// server's tcp_user_timeout.
var (
	// keepAlive is the probing of an idle connection: the first probe
	// after Idle, then every Interval, the connection dropped after Count
	// unanswered (the server's count is its system's: below). Where the
	// user timeout is set, Linux drops it instead once userTimeout has
	// passed with a probe unanswered, whatever the count.
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
		if network == "tcp" || network == "tcp4" || network == "tcp6" {
			// Best effort: a system (or Wine) without the option
			// still has keepalive, and the dial must not fail for it.
			c.Control(func(fd uintptr) { setUserTimeout(fd, userTimeout) })
		}
		return nil
	}}
	return d.DialContext(ctx, network, addr)
}

// serverParams asks the server to hold its side of the session to the
// same limits, as runtime parameters, except those the URL set. (Not the
// probe count: PostgreSQL on Windows has no such option and would log a
// line for every connection that set one. On a server without
// TCP_USER_TIMEOUT, any but Linux, tcp_user_timeout does the same: the
// URL's tcp_user_timeout=0 quiets it. A server before PostgreSQL 12 has
// no tcp_user_timeout and refuses the connection.)
func serverParams(params map[string]string) {
	for k, v := range map[string]string{
		"tcp_keepalives_idle":     strconv.Itoa(int(keepAlive.Idle / time.Second)),
		"tcp_keepalives_interval": strconv.Itoa(int(keepAlive.Interval / time.Second)),
		"tcp_user_timeout":        strconv.Itoa(int(userTimeout / time.Millisecond)),
	} {
		if _, ok := params[k]; !ok {
			params[k] = v
		}
	}
}
