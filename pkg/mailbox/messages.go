package mailbox

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxBody is the largest message body accepted (16 MiB): far above any task
// or reply, well below SQLite's limits.
const MaxBody = 16 << 20

// Validation failures of a message; the caller's input is wrong.
var (
	ErrEmptyBody   = errors.New("message body is empty")
	ErrBodyTooBig  = fmt.Errorf("message body is larger than %d bytes", MaxBody)
	ErrBodyNotUTF8 = errors.New("message body is not valid UTF-8")
	ErrBodyNUL     = errors.New("message body holds a NUL byte")
)

// Message is one mailbox message. Field names are the JSON contract.
type Message struct {
	ID        int64     `json:"id"`
	Team      string    `json:"team"`
	From      string    `json:"from"`
	To        string    `json:"to"`
	Subject   string    `json:"subject"`
	Body      string    `json:"body"`
	ReplyTo   int64     `json:"reply_to"`
	CreatedAt time.Time `json:"created_at"`
	ReadAt    time.Time `json:"read_at"`
}

// MessageJSON is a message as the JSON contract writes it: every field, null
// where a reply_to or read_at is absent, times in RFC 3339 UTC. A list that
// prints more about each message embeds it beside its own fields.
type MessageJSON struct {
	ID        int64      `json:"id"`
	Team      string     `json:"team"`
	From      string     `json:"from"`
	To        string     `json:"to"`
	Subject   string     `json:"subject"`
	Body      string     `json:"body"`
	ReplyTo   *int64     `json:"reply_to"`
	CreatedAt time.Time  `json:"created_at"`
	ReadAt    *time.Time `json:"read_at"`
}

// JSON is m in its contract form.
func (m Message) JSON() MessageJSON {
	w := MessageJSON{ID: m.ID, Team: m.Team, From: m.From, To: m.To, Subject: m.Subject, Body: m.Body, CreatedAt: m.CreatedAt.UTC()}
	if m.ReplyTo != 0 {
		w.ReplyTo = &m.ReplyTo
	}
	if !m.ReadAt.IsZero() {
		r := m.ReadAt.UTC()
		w.ReadAt = &r
	}
	return w
}

// MarshalJSON writes m in its contract form.
func (m Message) MarshalJSON() ([]byte, error) { return marshalNoEscape(m.JSON()) }

// CheckBody refuses a body that could not round-trip exactly: bodies are
// stored and printed as text (JSON included), so invalid UTF-8 would be
// mangled on the way out. Refusing it is the only way not to mangle it.
func CheckBody(body string) error {
	switch {
	case body == "":
		return ErrEmptyBody
	case len(body) > MaxBody:
		return ErrBodyTooBig
	case !utf8.ValidString(body):
		return ErrBodyNotUTF8
	case strings.IndexByte(body, 0) >= 0:
		return ErrBodyNUL
	}
	return nil
}

// Send stores m and returns it with its id and time set.
func (d *DB) Send(ctx context.Context, m Message) (Message, error) {
	m, _, err := d.SendKnown(ctx, m)
	return m, err
}

// SendKnown is Send that also reports whether m's recipient was ever
// spawned (has an agent record), asked in the statement that stores m
// rather than in one more.
func (d *DB) SendKnown(ctx context.Context, m Message) (Message, bool, error) {
	if err := CheckBody(m.Body); err != nil {
		return Message{}, false, err
	}
	m.CreatedAt = d.now().UTC()
	replyTo := replyToArg(m.ReplyTo)
	args := []any{m.Team, m.From, m.To, m.Subject, m.Body, Preview(m.Body), replyTo, nanos(m.CreatedAt)}
	row := `VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
	if lock := d.be.sendLock(); lock != "" {
		// The row is read from the lock's result, so its id is taken
		// once the lock is held.
		row = `SELECT ?::text, ?::text, ?::text, ?::text, ?::text, ?::text, ?::bigint, ?::bigint FROM (` + lock + `) l`
		args = append(args, m.Team)
	}
	var known bool
	store := func(ctx context.Context, q querier) error {
		return q.QueryRowContext(ctx,
			insertMessage+row+` RETURNING id, EXISTS (SELECT 1 FROM agents WHERE team = ? AND name = ?)`,
			append(args, m.Team, m.To)...).Scan(&m.ID, &known)
	}
	err := store(ctx, d.db)
	if answerLost(ctx, err) {
		// The id and known of a copy found; store sets them itself when
		// there is none, and sendAgain's known must not overwrite its.
		var found []Message
		var foundKnown bool
		if found, foundKnown, err = d.sendAgain(ctx, "send message", m, true, func(ctx context.Context, tx *sql.Tx) error { return store(ctx, tx) }); len(found) > 0 {
			m.ID, known = found[0].ID, foundKnown
		}
	} else if d.sendInterrupted(ctx, err) {
		err = d.unanswered("send message", err)
	}
	if err != nil {
		return Message{}, false, d.fail("send message", err)
	}
	return m, known, nil
}

// sendSettle is how long a send whose answer was lost (answerLost) keeps
// reconnecting to learn whether it was stored: a server restart's length,
// with room to spare.
var sendSettle = 30 * time.Second

// answerLost reports whether err is a PostgreSQL connection failing after a
// write went out to the server, which may then have stored it with only
// its answer lost: retrying it blindly could store it twice. A failure to
// connect, or one the client knows came before anything was sent, stored
// nothing (and database/sql has already retried that on a new connection).
func answerLost(ctx context.Context, err error) bool {
	return ctx.Err() == nil && Disconnected(err) && pgClient.ConnectPhase(err) == "" &&
		!pgClient.SafeToRetry(err) && !errors.Is(err, driver.ErrBadConn)
}

// sendAgain settles a send whose answer was lost. In one transaction that
// holds the team's send lock, which the lost statement held too (so the
// server has finished with it, whatever it did), it looks for the copies
// that send stored, by the sender's clock reading it was stamped with and
// its content (and recipient, with oneRecipient), and runs store only if
// there are none: the message is stored once, whichever way its answer was
// lost. A connection failing again is ridden out, all of it within
// sendSettle; past that, or interrupted, or failing before it has looked,
// the send's outcome is unknown, and the error says so (ErrUnanswered).
// known is whether the first copy found has an agent record.
func (d *DB) sendAgain(ctx context.Context, op string, m Message, oneRecipient bool, store func(ctx context.Context, tx *sql.Tx) error) (found []Message, known bool, err error) {
	look := `SELECT m.id, m.recipient, EXISTS (SELECT 1 FROM agents a WHERE a.team = m.team AND a.name = m.recipient) FROM messages m
		WHERE m.team = ? AND m.created_at = ? AND m.sender = ? AND m.subject = ? AND m.body = ? AND m.reply_to IS NOT DISTINCT FROM ?`
	args := []any{m.Team, nanos(m.CreatedAt), m.From, m.Subject, m.Body, replyToArg(m.ReplyTo)}
	if oneRecipient {
		look += ` AND m.recipient = ?`
		args = append(args, m.To)
	}
	look += ` ORDER BY m.id`
	looked := false // and found nothing: what store does next is a plain send's
	// The whole of it, not each try: a session the server has not yet seen
	// die may hold the locks it waits for.
	deadline := time.Now().Add(sendSettle)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	attempt := func() error {
		found, known, looked = nil, false, false
		// Serialized (the write lock too) as a send --all's transaction is,
		// which reads the roster it sends to.
		tx, err := d.be.begin(ctx, d.db, !oneRecipient)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, d.be.sendLock(), m.Team); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, look, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			c, k := m, false
			if err := rows.Scan(&c.ID, &c.To, &k); err != nil {
				rows.Close()
				return err
			}
			if len(found) == 0 {
				known = k
			}
			found = append(found, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(found) > 0 {
			return nil // stored already: nothing to commit
		}
		looked = true
		if err := store(ctx, tx); err != nil {
			return err
		}
		return tx.Commit()
	}
	for backoff := minBackoff; ; backoff = min(2*backoff, maxBackoff) {
		err = attempt()
		// A lock given up after the server's lock_timeout (ErrLocked) may
		// be held by a session it has not yet seen die: tried again too.
		if err == nil || !Disconnected(err) && d.be.kindOf(err) != ErrLocked || !sleepUntil(ctx, deadline, backoff, nil) {
			break
		}
	}
	if err != nil && (!looked || Disconnected(err) || ctx.Err() != nil) {
		return nil, false, d.unanswered(op, err)
	}
	return found, known, err
}

// unanswered is err, a send's failure that leaves its outcome unknown, as
// ErrUnanswered.
func (d *DB) unanswered(op string, err error) error {
	return &Error{Op: op, Path: d.path, Kind: ErrUnanswered, Err: err, Flag: d.flag, secret: d.secret}
}

// sendInterrupted reports whether err is a PostgreSQL send interrupted
// (Ctrl-C, SIGTERM) with its statement perhaps on its way or at the
// server: stored or not, nobody can say, and a sender told only
// "interrupted" would send it again.
func (d *DB) sendInterrupted(ctx context.Context, err error) bool {
	return ctx.Err() != nil && errors.Is(err, ctx.Err()) && d.be.sendLock() != ""
}

// replyToArg is a message's reply_to as a statement's argument: NULL for
// none.
func replyToArg(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// insertMessage stores one message, its eight columns given in this order.
const insertMessage = `INSERT INTO messages (team, sender, recipient, subject, body, preview, reply_to, created_at) `

// PreviewLen is how much of a body's first line a message keeps as its
// preview, in characters.
const PreviewLen = 200

// Preview is the first line of body, at most PreviewLen characters: what
// stale shows, kept beside the body so stale can answer from its index.
func Preview(body string) string {
	if i := strings.IndexAny(body, "\r\n"); i >= 0 {
		body = body[:i]
	}
	if r := []rune(body); len(r) > PreviewLen {
		body = string(r[:PreviewLen])
	}
	return body
}

const messageCols = `id, team, sender, recipient, subject, body, reply_to, created_at, read_at`

type rowScanner interface{ Scan(...any) error }

func scanMessage(r rowScanner) (Message, error) {
	var m Message
	var replyTo, created, read sql.NullInt64
	if err := r.Scan(&m.ID, &m.Team, &m.From, &m.To, &m.Subject, &m.Body, &replyTo, &created, &read); err != nil {
		return m, err
	}
	m.ReplyTo = replyTo.Int64
	m.CreatedAt = fromNanos(created)
	m.ReadAt = fromNanos(read)
	return m, nil
}

func queryMessages(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query string, args ...any) ([]Message, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Message
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

func limitClause(limit int) string {
	if limit <= 0 {
		return ""
	}
	return fmt.Sprintf(" LIMIT %d", limit)
}

// Drain hands the unread messages for team/to, oldest first (at most limit;
// 0 means all), to deliver and then marks exactly those read. It never holds
// a lock while deliver runs, however long deliver takes (a stalled pipe, a
// pager): it claims the messages in one short transaction — a lease that
// keeps every other drain off them for the DB's lease (SetLease) — runs
// deliver with no transaction open, then marks them read in a second short
// one. If deliver fails the claim is released at once; if the process dies
// the lease runs out and the next drain gets them again: a crash can repeat
// a message but never lose one. While a lease holds, no two drains get the
// same message; a drain slower than its lease may see its messages given
// to another drain too (repeated, never lost).
func (d *DB) Drain(ctx context.Context, team, to string, limit int, deliver func([]Message) error) ([]Message, error) {
	return d.drain(ctx, team, to, 0, limit, deliver)
}

// DefaultLease is how long a drain's claim keeps other drains off its
// messages: far longer than a drain takes to write a batch to any reader
// that keeps up, short enough that a killed drain's messages come back soon.
const DefaultLease = 30 * time.Second

// SetLease sets how long a drain's claim holds (see Drain); l <= 0 restores
// DefaultLease.
func (d *DB) SetLease(l time.Duration) {
	if l <= 0 {
		l = DefaultLease
	}
	d.lease = l
}

// OnClaim sets fn to run where a drain's claim may come to hold messages,
// before the lease commits (nil: nothing): on SQLite once its transaction
// found some; on PostgreSQL, whose claim is one statement that leases as it
// selects, before that statement. The inbox command catches SIGINT and
// SIGTERM there: an interruption from then on either rolls the claim back
// or has the drain give its lease back, and a SQLite drain that finds
// nothing never pays for catching them.
func (d *DB) OnClaim(fn func()) { d.onClaim = fn }

// DrainReplies is Drain for only the unread replies to message replyTo: a
// dispatcher waits for the answer to the message it sent, and leaves every
// other message in its inbox for whoever else drains it, so any number of
// dispatchers can share one inbox name.
func (d *DB) DrainReplies(ctx context.Context, team, to string, replyTo int64, limit int, deliver func([]Message) error) ([]Message, error) {
	if replyTo <= 0 {
		return nil, fmt.Errorf("reply-to id %d: want a message id", replyTo)
	}
	return d.drain(ctx, team, to, replyTo, limit, deliver)
}

// unreadWhere selects team/to's unread messages, only replies to replyTo
// when it is not 0. Replies are served by messages_unread_replies (team,
// recipient, reply_to, id), the rest by messages_unread_by_recipient.
func unreadWhere(team, to string, replyTo int64) (from, where string, args []any) {
	if replyTo != 0 {
		return `messages INDEXED BY messages_unread_replies`,
			`team = ? AND recipient = ? AND reply_to = ? AND read_at IS NULL`, []any{team, to, replyTo}
	}
	return unreadByRecipient, `team = ? AND recipient = ? AND read_at IS NULL`, []any{team, to}
}

func (d *DB) drain(ctx context.Context, team, to string, replyTo int64, limit int, deliver func([]Message) error) ([]Message, error) {
	from, where, args := unreadWhere(team, to, replyTo)
	token := rand.Int64()
	now := d.now().UTC()
	lease := d.lease
	if lease <= 0 {
		lease = DefaultLease
	}
	free := where + ` AND (lease_until IS NULL OR lease_until <= ?)`
	freeArgs := append(slices.Clip(args), nanos(now))
	// Most drains find nothing (an agent drains every turn): on SQLite one
	// read says so, without the write lock and the transaction a claim
	// takes, and answers in passing what an empty drain is asked next
	// (TeamKnown). On PostgreSQL the claim is itself one statement, and
	// its UPDATE is what tells a drain pointed at a read-only standby that
	// it is, empty inbox or not.
	if _, ok := d.be.(sqliteBackend); ok {
		var pending, known bool
		if err := d.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM `+from+` WHERE `+free+`), `+teamKnown,
			append(slices.Clip(freeArgs), team, team)...).Scan(&pending, &known); err != nil {
			return nil, d.fail("drain inbox", err)
		}
		if !pending {
			d.seen.set(team, known, d.now())
			return nil, nil
		}
	}
	// The claim is a write, so a database we cannot write (SQLite quietly
	// turns BEGIN IMMEDIATE into a read transaction on a read-only file)
	// fails here, before anything is printed, instead of repeating every
	// message on every drain.
	claiming := d.onClaim
	if claiming == nil {
		claiming = func() {}
	}
	msgs, err := d.be.claim(ctx, d.db, d.now, claiming, from, free, args, limit, token, lease)
	if err == nil && len(msgs) > 0 {
		// An interruption from claiming on gives the batch back,
		// undelivered.
		err = ctx.Err()
	}
	err = d.fail("drain inbox", err)
	if len(msgs) == 0 && err == nil {
		return nil, nil
	}
	// Ours are the rows still carrying our token (in the id range claimed,
	// once known): the index of unread messages serves it. A claim that
	// failed may have returned only some of its rows (an answer cut short
	// on PostgreSQL, whose RETURNING keeps no order): no range then.
	ours, oursArgs := where+` AND claim_token = ?`, append(slices.Clip(args), token)
	if len(msgs) > 0 && err == nil {
		ours += ` AND id BETWEEN ? AND ?`
		oursArgs = append(oursArgs, msgs[0].ID, msgs[len(msgs)-1].ID)
	}
	// Once claimed, a batch is settled even if ctx ends meanwhile: released
	// for the next drain, or marked read after a complete delivery.
	settle := context.WithoutCancel(ctx)
	release := func() {
		d.db.ExecContext(settle, `UPDATE `+from+` SET claim_token = NULL, lease_until = NULL WHERE `+ours, oursArgs...)
	}
	if err != nil {
		// A claim whose answer was lost (a connection cut, an interruption)
		// may have landed: give back whatever carries our token rather than
		// leave it leased.
		if len(msgs) > 0 || Disconnected(err) || ctx.Err() != nil {
			release()
		}
		return nil, err
	}
	if err := deliver(msgs); err != nil {
		release()
		return nil, d.fail("drain inbox", err)
	}
	readAt := d.now().UTC()
	// A row another drain took over after our lease ran out is its to mark.
	// The batch is delivered now: a connection lost meanwhile (a server
	// restart) is reconnected and the mark tried again, for as long as the
	// lease, rather than leave the batch to come back once it runs out.
	// The mark is keyed on our token, so a repeat of one that landed
	// changes nothing.
	mark := func() error {
		_, err := d.db.ExecContext(settle, `UPDATE `+from+` SET read_at = ?, claim_token = NULL, lease_until = NULL WHERE `+ours,
			append([]any{nanos(readAt)}, oursArgs...)...)
		return err
	}
	err = mark()
	for deadline, backoff := time.Now().Add(lease), minBackoff; err != nil && Disconnected(err); backoff = min(2*backoff, maxBackoff) {
		if !sleepUntil(settle, deadline, backoff, nil) {
			break
		}
		err = mark()
	}
	if err != nil {
		// Not to be ridden out as a lost connection (Watch): the batch
		// went out, and a wait that went on would report no message.
		return nil, d.fail("mark messages read", delivered{err})
	}
	for i := range msgs {
		msgs[i].ReadAt = readAt
	}
	return msgs, nil
}

// delivered is the failure of a drain after its batch was delivered: never
// Disconnected, whatever it wraps.
type delivered struct{ err error }

func (e delivered) Error() string { return e.err.Error() }
func (e delivered) Unwrap() error { return e.err }

// PeekReplies is Peek for only the unread replies to message replyTo.
func (d *DB) PeekReplies(ctx context.Context, team, to string, replyTo int64, limit int) ([]Message, error) {
	from, where, args := unreadWhere(team, to, replyTo)
	msgs, err := queryMessages(ctx, d.db, `SELECT `+messageCols+` FROM `+from+` WHERE `+where+` ORDER BY id`+limitClause(limit), args...)
	return msgs, d.fail("peek inbox", err)
}

// Peek returns the unread messages for team/to without marking them.
func (d *DB) Peek(ctx context.Context, team, to string, limit int) ([]Message, error) {
	msgs, err := queryMessages(ctx, d.db,
		`SELECT `+messageCols+` FROM `+unreadByRecipient+`
		 WHERE team = ? AND recipient = ? AND read_at IS NULL
		 ORDER BY id`+limitClause(limit), team, to)
	return msgs, d.fail("peek inbox", err)
}

// List returns a team's messages, oldest first: unread ones, or all with all
// set; to == "" means every recipient. It holds the whole list in memory;
// ListEach streams it.
func (d *DB) List(ctx context.Context, team, to string, all bool) ([]Message, error) {
	var msgs []Message
	err := d.ListEach(ctx, team, to, all, func(m Message) error {
		msgs = append(msgs, m)
		return nil
	})
	return msgs, err
}

// listQuery picks the index that serves each form of inbox list, so the
// cost follows what is listed, not the team's history: unread ones come
// from the partial indexes of unread messages, the whole history from the
// (team, recipient, id) and (team, id) indexes, in id order without a sort.
func listQuery(to string, all bool) string {
	var from string
	switch {
	case to != "" && !all:
		from = unreadByRecipient
	case to != "":
		from = `messages INDEXED BY messages_by_recipient`
	case !all:
		from = `messages INDEXED BY messages_unread_by_team`
	default:
		from = `messages INDEXED BY messages_by_team`
	}
	q := `SELECT ` + messageCols + ` FROM ` + from + ` WHERE team = ?`
	if to != "" {
		q += ` AND recipient = ?`
	}
	if !all {
		q += ` AND read_at IS NULL`
	}
	return q + ` AND id > ? ORDER BY id LIMIT ?`
}

// ListEach calls fn with each of a team's messages, oldest first (unread
// ones, or all with all set; to == "" means every recipient). It reads them
// in batches (keyset pagination on id: at most listBatchRows messages or
// listBatchBytes of bodies each, so memory stays bounded however long the
// history), and calls fn only once a batch's read has ended. No read
// transaction stays open while fn runs, so a stalled reader (inbox list
// --all | less, left at its first page) neither delays anyone nor holds
// back SQLite's checkpoints: the WAL grew by every message sent meanwhile.
// A message sent while the list runs may show up at its end.
func (d *DB) ListEach(ctx context.Context, team, to string, all bool, fn func(Message) error) error {
	q := listQuery(to, all)
	for after := int64(0); ; {
		args := []any{team}
		if to != "" {
			args = append(args, to)
		}
		batch, err := d.listBatch(ctx, q, append(args, after, listBatchRows))
		if err != nil {
			return d.fail("list messages", err)
		}
		for _, m := range batch {
			if err := fn(m); err != nil {
				return err
			}
		}
		if len(batch) == 0 {
			return nil
		}
		after = batch[len(batch)-1].ID
	}
}

// A list batch holds at most listBatchRows messages, and stops early once its
// bodies pass listBatchBytes (a body may be 16 MiB).
const (
	listBatchRows  = 500
	listBatchBytes = 4 << 20
)

// listBatch runs one batch's query and reads it whole, closing it before
// anything is done with the messages.
func (d *DB) listBatch(ctx context.Context, q string, args []any) ([]Message, error) {
	rows, err := d.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Message
	size := 0
	for size < listBatchBytes && rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
		size += len(m.Body)
	}
	return out, rows.Err()
}

// Message returns one message by id.
func (d *DB) Message(ctx context.Context, id int64) (Message, error) {
	m, err := scanMessage(d.db.QueryRowContext(ctx, `SELECT `+messageCols+` FROM messages WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		err = fmt.Errorf("message %d: %w", id, ErrNotFound)
	}
	return m, d.fail("read message", err)
}

// StaleMessage is an unread message past its cut-off, with what is known of
// its recipient. Its Body holds only the preview (the first line, at most
// PreviewLen characters): stale lists, inbox reads.
type StaleMessage struct {
	Message
	// Recipient is the recipient's agent record; zero when never spawned.
	Recipient *Agent `json:"-"`
}

// staleQuery selects what Stale returns, by team and cut-off (and
// recipient), from the covering index alone and in its order (team,
// created_at, id), which spares SQLite a sorter: Stale orders by id.
func staleQuery(byRecipient bool) string {
	q := `SELECT m.id, m.sender, m.recipient, m.subject, m.preview, m.reply_to, m.created_at
	      FROM messages m INDEXED BY messages_unread_by_age
	      WHERE m.team = ? AND m.read_at IS NULL AND m.created_at <= ?`
	if byRecipient {
		q += ` AND m.recipient = ?`
	}
	return q + ` ORDER BY m.created_at, m.id`
}

// Stale returns team's messages (for one recipient when to != "") still
// unread and created at or before cutoff, oldest first. It reads only the
// partial index of unread messages by age, which covers every column it
// needs: the cost follows the number of unread messages, not the size of the
// mailbox, and no row of the table is read.
func (d *DB) Stale(ctx context.Context, team, to string, cutoff time.Time) ([]StaleMessage, error) {
	args := []any{team, nanos(cutoff)}
	if to != "" {
		args = append(args, to)
	}
	rows, err := d.db.QueryContext(ctx, staleQuery(to != ""), args...)
	if err != nil {
		return nil, d.fail("find stale messages", err)
	}
	defer rows.Close()
	var out []StaleMessage
	for rows.Next() {
		s := StaleMessage{Message: Message{Team: team}}
		var replyTo, created sql.NullInt64
		if err := rows.Scan(&s.ID, &s.From, &s.To, &s.Subject, &s.Body, &replyTo, &created); err != nil {
			return nil, d.fail("find stale messages", err)
		}
		s.ReplyTo, s.CreatedAt = replyTo.Int64, fromNanos(created)
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, d.fail("find stale messages", err)
	}
	rows.Close()
	// Oldest first is by id, as ever: created_at follows the clock of
	// whoever sent, which need not agree.
	slices.SortFunc(out, func(a, b StaleMessage) int { return cmp.Compare(a.ID, b.ID) })
	if err := d.attachRecipients(ctx, team, to, out); err != nil {
		return nil, err
	}
	return out, d.fail("find stale messages", d.probeMessages(ctx, team, out))
}

// attachRecipients sets each listed message's recipient record: read once
// (for the one recipient when to != "", else for the team) rather than
// joined into every message, which would carry its agent's whole row, task
// included: most of the query's cost with ~300 listed.
func (d *DB) attachRecipients(ctx context.Context, team, to string, out []StaleMessage) error {
	if len(out) == 0 {
		return nil
	}
	var agents []Agent
	if to != "" {
		a, err := d.Agent(ctx, team, to)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		if err == nil {
			agents = []Agent{a}
		}
	} else {
		var err error
		if agents, err = d.Agents(ctx, team); err != nil {
			return err
		}
	}
	byName := make(map[string]*Agent, len(agents))
	for i := range agents {
		byName[agents[i].Name] = &agents[i]
	}
	for i := range out {
		out[i].Recipient = byName[out[i].To]
	}
	return nil
}

// probeMessages reads a few pages of the messages table itself, which
// stale's covering index never touches: its last row (the rightmost path
// of the table's b-tree) and the row of the first message listed. A table
// that is corrupt there fails here with ErrCorrupt instead of stale
// answering from an intact index as if all were well. It is a probe, not
// an integrity check (that reads the whole file): a few page reads.
//
// It is one statement: when nothing is listed it also answers TeamKnown,
// which an empty stale asks next.
func (d *DB) probeMessages(ctx context.Context, team string, listed []StaleMessage) error {
	var last sql.NullInt64
	if len(listed) > 0 {
		var to sql.NullString
		return d.db.QueryRowContext(ctx, `SELECT (SELECT max(id) FROM messages), (SELECT recipient FROM messages WHERE id = ?)`,
			listed[0].ID).Scan(&last, &to)
	}
	var known bool
	err := d.db.QueryRowContext(ctx, `SELECT (SELECT max(id) FROM messages), `+teamKnown, team, team).Scan(&last, &known)
	if err == nil {
		d.seen.set(team, known, d.now())
	}
	return err
}
