package mailbox_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/teamkit/teamkit/internal/pgtest"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

// roundTrips reads what clients send a PostgreSQL server (through pgProxy)
// as protocol messages, and counts the round trips they ask for: each Sync
// ends one of the extended protocol's, each simple Query is one (a pgx
// ping, "-- ping", among them, counted apart too).
type roundTrips struct {
	mu    sync.Mutex
	conns map[net.Conn]*pgStream
	sql   []string // the statements of the counted round trips, in order
	n     int
	pings int
}

// pgStream is one connection's unparsed bytes; typed is false until its
// startup message has gone by (the only message without a type byte).
type pgStream struct {
	buf   []byte
	typed bool
}

func (r *roundTrips) see(c net.Conn, sent []byte, fromClient bool) bool {
	if !fromClient {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conns == nil {
		r.conns = map[net.Conn]*pgStream{}
	}
	s := r.conns[c]
	if s == nil {
		s = &pgStream{}
		r.conns[c] = s
	}
	s.buf = append(s.buf, sent...)
	for {
		head := 4
		if s.typed {
			head = 5
		}
		if len(s.buf) < head {
			return true
		}
		size := int(binary.BigEndian.Uint32(s.buf[head-4:])) // counts itself, not the type
		if len(s.buf) < head-4+size {
			return true
		}
		msg := s.buf[:head-4+size]
		s.buf = s.buf[len(msg):]
		if !s.typed {
			// SSLRequest and GSSENCRequest (80877103, 80877104) come
			// before the startup message, which gives the protocol's
			// version (3.x).
			s.typed = binary.BigEndian.Uint32(msg[4:8])>>16 == 3
			continue
		}
		body := msg[5:]
		switch msg[0] {
		case 'Q':
			q := string(bytes.TrimRight(body, "\x00"))
			r.n++
			r.sql = append(r.sql, q)
			if q == "-- ping" {
				r.pings++
			}
		case 'P': // statement name, then the query
			if _, q, ok := bytes.Cut(body, []byte{0}); ok {
				r.sql = append(r.sql, string(q[:bytes.IndexByte(q, 0)]))
			}
		case 'S':
			r.n++
		}
	}
}

// take returns the round trips counted since the last take, how many of
// them were pings, and their statements.
func (r *roundTrips) take() (n, pings int, sql string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, pings, sql = r.n, r.pings, strings.Join(r.sql, " | ")
	r.n, r.pings, r.sql = 0, 0, nil
	return n, pings, strings.Join(strings.Fields(sql), " ")
}

// TestPostgresDrainRoundTrips: on PostgreSQL opening the mailbox is one
// round trip (its schema's version), a drain of a message two (its claim,
// then its read mark) and an empty drain one; every round trip is a wait
// between hosts for a team that spans machines, and an agent drains on
// every turn. No statement pings its connection first, unless that
// connection has been idle a second: none here, unless this machine
// stalled that long between two statements.
func TestPostgresDrainRoundTrips(t *testing.T) {
	var rt roundTrips
	u := pgProxy(t, pgtest.URL(t), rt.see)
	open(t, u, nil).Close() // the schema
	rt.take()
	ctx := context.Background()
	began := time.Now()
	db := open(t, u, nil)
	opened := time.Now()
	n, pings, sql := rt.take()
	if n != 1 && opened.Sub(began) < time.Second {
		t.Fatalf("opening the mailbox took %d round trips (%s); want 1", n, sql)
	}
	// The drain's first statement pings if a second has passed since the
	// send took the connection: the stall allowed for runs from there.
	began = time.Now()
	send(t, db, "t", "lead", "w", "task")
	rt.take()
	var got []mailbox.Message
	if _, err := db.Drain(ctx, "t", "w", 0, keep(&got)); err != nil || len(got) != 1 {
		t.Fatalf("Drain = %d messages, %v; want the one", len(got), err)
	}
	if _, err := db.Drain(ctx, "t", "w", 0, keep(&got)); err != nil || len(got) != 1 {
		t.Fatalf("the second Drain = %d messages in all, %v; want none more", len(got), err)
	}
	drained := time.Now()
	if n, pings, sql = rt.take(); n-pings != 3 || pings > 0 && drained.Sub(began) < time.Second {
		t.Fatalf("a drain of one message then an empty drain took %d round trips, %d of them pings (%s); want 3, no ping: the claim and the read mark, then the empty claim", n, pings, sql)
	}
}
