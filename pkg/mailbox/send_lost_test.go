package mailbox_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/teamkit/teamkit/internal/pgtest"
	"github.com/teamkit/teamkit/pkg/mailbox"
)

// cutOnce is a pgProxy pass that cuts one connection once it is armed:
// the first to send a chunk holding trigger is closed, before the chunk
// reaches the server (early) or as the server's answer to it comes back
// (the answer dropped). With refuse set, every connection after the cut
// is closed too: a server gone for good.
type cutOnce struct {
	trigger string
	early   bool
	refuse  bool

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
	case p.done && p.refuse:
		c.Close()
		return false
	case p.done || !p.armed:
		return true
	case fromClient && p.cut == nil && bytes.Contains(chunk, []byte(p.trigger)):
		p.cut = c
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
