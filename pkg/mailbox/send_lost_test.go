package mailbox_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/teamkit/teamkit/internal/pgtest"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

// cutOnce is a pgProxy pass that cuts one connection once it is armed:
// the first to send a chunk holding trigger is closed, before the chunk
// reaches the server (early), as soon as it has (sent), or as the server's
// answer to it comes back (the answer dropped). With refuse set, every
// connection after the cut is closed too: a server gone for good. With
// noCancel, the cancel request pgx sends the server for a statement whose
// connection failed is lost as well.
type cutOnce struct {
	trigger  string
	early    bool
	sent     bool
	refuse   bool
	noCancel bool

	mu    sync.Mutex
	armed bool
	cut   net.Conn
	done  bool
}

func (p *cutOnce) arm() {
	p.mu.Lock()
	p.armed = true
	p.mu.Unlock()
}

func (p *cutOnce) cutDone() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.done
}

func (p *cutOnce) pass(c net.Conn, chunk []byte, fromClient bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.done && p.refuse, p.done && p.noCancel && fromClient && isCancelRequest(chunk):
		c.Close()
		return false
	case p.done || !p.armed:
		return true
	case fromClient && p.cut == nil && bytes.Contains(chunk, []byte(p.trigger)):
		p.cut = c
		if p.sent {
			// The chunk is forwarded after this returns, and only then
			// does the proxy see the client gone and close the server's
			// side.
			p.done = true
			c.Close()
			return true
		}
		if !p.early {
			return true
		}
	case fromClient || c != p.cut:
		return true
	}
	p.done = true
	c.Close()
	return false
}

// isCancelRequest reports whether chunk is a CancelRequest, the whole of
// what a connection opened to cancel another's statement sends.
func isCancelRequest(chunk []byte) bool {
	return len(chunk) == 16 && binary.BigEndian.Uint32(chunk) == 16 && binary.BigEndian.Uint32(chunk[4:]) == 80877102
}

// holdSendLock takes team t's send lock (as a send does) in a transaction
// on a connection of its own to u, which it returns, held until the
// transaction ends or the test does.
func holdSendLock(t *testing.T, u, team string) (*pgx.Conn, pgx.Tx) {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(ctx) })
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback(ctx) })
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('teamkit/' || current_schema() || '/send/' || $1, 0))`, team); err != nil {
		t.Fatal(err)
	}
	return c, tx
}

// messagesIn is every message of team t, read or not, read directly.
func messagesIn(t *testing.T, u string) []mailbox.Message {
	t.Helper()
	msgs, err := open(t, u, nil).List(context.Background(), "t", "", true)
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// TestPostgresSendAnswerLost: PostgreSQL stores the message, and the
// connection is cut as its answer comes back. The send must not fail (the
// message is there: a caller who retried would queue it twice), nor store
// it again: it finds its message and reports that id.
func TestPostgresSendAnswerLost(t *testing.T) {
	direct := pgtest.URL(t)
	p := &cutOnce{trigger: "INSERT INTO messages"}
	db := open(t, pgProxy(t, direct, p.pass), nil)
	p.arm()
	m, known, err := db.SendKnown(context.Background(), mailbox.Message{Team: "t", From: "lead", To: "w", Body: "task"})
	if !p.cutDone() {
		t.Fatal("the proxy never cut the send's connection")
	}
	if err != nil {
		t.Fatalf("a send whose answer was lost = %v; want its message found", err)
	}
	if known {
		t.Errorf("known = true for an agent never spawned")
	}
	got := messagesIn(t, direct)
	if len(got) != 1 || got[0].ID != m.ID || got[0].Body != "task" {
		t.Fatalf("stored %+v; want the one message, id %d", got, m.ID)
	}
}

// TestPostgresSendCutBeforeServer: the connection is cut with the
// statement sent but before the server read it. The sender cannot tell
// this from a lost answer; it looks, finds nothing, and stores the
// message once.
func TestPostgresSendCutBeforeServer(t *testing.T) {
	direct := pgtest.URL(t)
	p := &cutOnce{trigger: "INSERT INTO messages", early: true}
	db := open(t, pgProxy(t, direct, p.pass), nil)
	p.arm()
	m, err := db.Send(context.Background(), mailbox.Message{Team: "t", From: "lead", To: "w", Body: "task", ReplyTo: 0})
	if !p.cutDone() {
		t.Fatal("the proxy never cut the send's connection")
	}
	if err != nil {
		t.Fatalf("a send cut before the server = %v; want it stored on a new connection", err)
	}
	got := messagesIn(t, direct)
	if len(got) != 1 || got[0].ID != m.ID {
		t.Fatalf("stored %+v; want the one message, id %d", got, m.ID)
	}
}

// TestPostgresSendCutToKnownAgent: a send to a spawned agent, stored on a
// new connection after its first was cut, still reports the agent known:
// inbox send would otherwise note that it is not yet spawned.
func TestPostgresSendCutToKnownAgent(t *testing.T) {
	direct := pgtest.URL(t)
	p := &cutOnce{trigger: "INSERT INTO messages", early: true}
	db := open(t, pgProxy(t, direct, p.pass), nil)
	ctx := context.Background()
	if err := db.RecordLaunch(ctx, mailbox.Agent{Team: "t", Name: "w", Type: "claude", Run: "r-w", State: mailbox.StateExited}); err != nil {
		t.Fatal(err)
	}
	p.arm()
	_, known, err := db.SendKnown(ctx, mailbox.Message{Team: "t", From: "lead", To: "w", Body: "task"})
	if err != nil || !p.cutDone() {
		t.Fatalf("send = %v (cut %v)", err, p.cutDone())
	}
	if !known {
		t.Errorf("known = false for an agent spawn recorded")
	}
}

// TestPostgresSendLostWhileItWaits: the connection is cut with the send's
// INSERT at the server, where it waits for the team's send lock (held
// here by another session, as a busy team's sends hold it in turn), and
// the server, which does not read a waiting session's socket, runs it
// once the lock is free. The sender settles on a new connection meanwhile:
// its look must wait for that INSERT (it takes the send lock first), or it
// finds nothing, stores the message, and the lost INSERT stores it again.
func TestPostgresSendLostWhileItWaits(t *testing.T) {
	direct := pgtest.URL(t)
	p := &cutOnce{trigger: "INSERT INTO messages", sent: true, noCancel: true}
	db := open(t, pgProxy(t, direct, p.pass), nil)
	ctx := context.Background()
	holder, hold := holdSendLock(t, direct, "t")
	p.arm()
	type sent struct {
		m   mailbox.Message
		err error
	}
	done := make(chan sent, 1)
	go func() {
		m, err := db.Send(ctx, mailbox.Message{Team: "t", From: "lead", To: "w", Body: "task"})
		done <- sent{m, err}
	}()
	// The lost INSERT and the settling send, both waiting for the lock.
	for deadline := time.Now().Add(30 * time.Second); ; {
		var n int
		if err := holder.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
			AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 2 {
			break
		}
		select {
		case r := <-done:
			t.Fatalf("the send ended (%v, %v) while the send lock was held", r.m, r.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions wait for the send lock after 30 s; want the lost INSERT and the settling send", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := hold.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("a send lost while its INSERT waited = %v; want its message found", r.err)
	}
	if got := messagesIn(t, direct); len(got) != 1 || got[0].ID != r.m.ID {
		t.Fatalf("stored %+v; want the one message, id %d", got, r.m.ID)
	}
}

// TestPostgresSendSameMessageTwice: the look for a lost send's message goes
// by the sender's clock reading as well as its content, so the same text
// sent before, to the same agent, is not taken for it.
func TestPostgresSendSameMessageTwice(t *testing.T) {
	direct := pgtest.URL(t)
	p := &cutOnce{trigger: "INSERT INTO messages", early: true}
	db := open(t, pgProxy(t, direct, p.pass), nil)
	first := send(t, db, "t", "lead", "w", "again")
	p.arm()
	m, err := db.Send(context.Background(), mailbox.Message{Team: "t", From: "lead", To: "w", Body: "again"})
	if err != nil || !p.cutDone() {
		t.Fatalf("send = %v (cut %v)", err, p.cutDone())
	}
	if m.ID == first.ID {
		t.Fatalf("the second send reported the first one's id %d", m.ID)
	}
	if got := messagesIn(t, direct); len(got) != 2 {
		t.Fatalf("stored %d messages; want 2", len(got))
	}
}

// TestPostgresSendAllCommitLost: send --all's transaction commits and the
// answer to its COMMIT is lost: every copy is there once, and the send
// reports them.
func TestPostgresSendAllCommitLost(t *testing.T) {
	direct := pgtest.URL(t)
	p := &cutOnce{trigger: "commit"}
	db := open(t, pgProxy(t, direct, p.pass), nil)
	ctx := context.Background()
	for _, n := range []string{"w1", "w2"} {
		if err := db.RecordLaunch(ctx, mailbox.Agent{Team: "t", Name: n, Type: "claude", Run: "r-" + n, State: mailbox.StateExited}); err != nil {
			t.Fatal(err)
		}
	}
	p.arm()
	sent, err := db.SendAll(ctx, mailbox.Message{Team: "t", From: "lead", Body: "stop"})
	if !p.cutDone() {
		t.Fatal("the proxy never cut the broadcast's connection")
	}
	if err != nil {
		t.Fatalf("a broadcast whose commit's answer was lost = %v; want its copies found", err)
	}
	got := messagesIn(t, direct)
	if len(got) != 2 || len(sent) != 2 {
		t.Fatalf("stored %+v, reported %+v; want one copy each for w1 and w2", got, sent)
	}
	for i := range got {
		if got[i].ID != sent[i].ID || got[i].To != sent[i].To {
			t.Errorf("copy %d: stored %d to %s, reported %d to %s", i, got[i].ID, got[i].To, sent[i].ID, sent[i].To)
		}
	}
}

// TestPostgresSendUnanswered: the answer is lost and the server cannot be
// reached again. The message is stored, but the sender cannot know it:
// the error must say the outcome is unknown (ErrUnanswered, with a hint to
// look before sending again), never that the send failed.
func TestPostgresSendUnanswered(t *testing.T) {
	direct := pgtest.URL(t)
	p := &cutOnce{trigger: "INSERT INTO messages", refuse: true}
	db := open(t, pgProxy(t, direct, p.pass), nil)
	p.arm()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := db.Send(ctx, mailbox.Message{Team: "t", From: "lead", To: "w", Body: "task"})
	var e *mailbox.Error
	if !errors.Is(err, mailbox.ErrUnanswered) || !errors.As(err, &e) || !strings.Contains(e.Hint(), "before sending it again") {
		t.Fatalf("a send whose answer was lost, the server gone = %v; want ErrUnanswered and its hint", err)
	}
	// Its recipient may have drained it already: a look at unread mail
	// alone would miss it, and the message be sent twice.
	if !strings.Contains(e.Hint(), "--all") {
		t.Errorf("hint %q does not look among messages already read", e.Hint())
	}
	if got := messagesIn(t, direct); len(got) != 1 {
		t.Fatalf("stored %d messages; want the 1 the server took", len(got))
	}
}

// TestPostgresSendInterrupted: the server stores the message, and the
// sender is interrupted while it waits for the answer. It cannot settle
// (it is told to stop), and "interrupted" alone would have the user send
// it again: the error is ErrUnanswered too, whose hint says to look first.
func TestPostgresSendInterrupted(t *testing.T) {
	direct := pgtest.URL(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var sending net.Conn
	u := pgProxy(t, direct, func(c net.Conn, chunk []byte, fromClient bool) bool {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case fromClient && bytes.Contains(chunk, []byte("INSERT INTO messages")):
			sending = c
		case !fromClient && c == sending:
			cancel() // the answer held back: the sender is interrupted first
			return false
		}
		return true
	})
	db := open(t, u, nil)
	_, err := db.Send(ctx, mailbox.Message{Team: "t", From: "lead", To: "w", Body: "task"})
	if !errors.Is(err, mailbox.ErrUnanswered) || !errors.Is(err, context.Canceled) {
		t.Fatalf("a send interrupted as its answer came = %v; want ErrUnanswered, interrupted", err)
	}
	if got := messagesIn(t, direct); len(got) != 1 {
		t.Fatalf("stored %d messages; want the 1 the server took", len(got))
	}
}

// TestPostgresSendSettleBounded: the send lock the settle waits for stays
// held (a session the server has not yet seen die, say), and the server's
// lock_timeout is far off. The settle gives up at its own limit, saying the
// outcome is unknown, rather than wait for the lock as long as it is held.
func TestPostgresSendSettleBounded(t *testing.T) {
	mailbox.SendSettle(t, time.Second)
	direct := pgtest.URL(t)
	p := &cutOnce{trigger: "INSERT INTO messages", early: true}
	ctx := context.Background()
	db, err := mailbox.Open(ctx, pgProxy(t, direct, p.pass), mailbox.Options{BusyTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	holdSendLock(t, direct, "t")
	p.arm()
	done := make(chan error, 1)
	go func() {
		_, err := db.Send(ctx, mailbox.Message{Team: "t", From: "lead", To: "w", Body: "task"})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, mailbox.ErrUnanswered) {
			t.Fatalf("a settle that met a held send lock = %v; want ErrUnanswered", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the settle still waits for the send lock after 2 minutes; its limit is 1 s")
	}
}
