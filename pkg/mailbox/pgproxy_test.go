package mailbox_test

import (
	"net"
	"net/url"
	"sync"
	"testing"
)

// pgProxy is a TCP proxy to the PostgreSQL server of pgURL, for the life of
// the test; it returns the URL that reaches the server through it. Each
// chunk read from either side is forwarded if pass(client, chunk,
// fromClient) says so, where client is the client's end of the connection;
// one not forwarded is dropped, never answered.
func pgProxy(t testing.TB, pgURL string, pass func(client net.Conn, chunk []byte, fromClient bool) bool) string {
	u, err := url.Parse(pgURL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := u.Host
	var conns []net.Conn
	var mu sync.Mutex
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	pipe := func(client, from, to net.Conn, fromClient bool) {
		buf := make([]byte, 64<<10)
		for {
			n, err := from.Read(buf)
			if err != nil {
				from.Close()
				to.Close()
				return
			}
			if !pass(client, buf[:n], fromClient) {
				continue
			}
			if _, err := to.Write(buf[:n]); err != nil {
				return
			}
		}
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", server)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, s)
			mu.Unlock()
			go pipe(c, c, s, true)
			go pipe(c, s, c, false)
		}
	}()
	u.Host = ln.Addr().String()
	return u.String()
}
