package mailbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrNoAgents is a broadcast to a team that has no recorded agents (but
// perhaps the sender).
var ErrNoAgents = errors.New("no agent of this team was ever spawned")

// SendAll stores one copy of m for every agent recorded in m.Team (by name,
// the sender itself excluded) in one transaction: every recipient gets it,
// or none does. It returns the stored messages.
func (d *DB) SendAll(ctx context.Context, m Message) ([]Message, error) {
	if err := CheckBody(m.Body); err != nil {
		return nil, err
	}
	m.CreatedAt = d.now().UTC()
	replyTo := replyToArg(m.ReplyTo)
	var out []Message
	store := func(ctx context.Context, tx *sql.Tx) error {
		out = nil
		rows, err := tx.QueryContext(ctx, `SELECT name FROM agents WHERE team = ? AND name != ? ORDER BY name`, m.Team, m.From)
		if err != nil {
			return err
		}
		var to []string
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				rows.Close()
				return err
			}
			to = append(to, n)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(to) == 0 {
			var sender bool
			if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM agents WHERE team = ? AND name = ?)`, m.Team, m.From).Scan(&sender); err != nil {
				return err
			}
			if sender {
				return fmt.Errorf("team %s: %w but the sender, %s", m.Team, ErrNoAgents, m.From)
			}
			return fmt.Errorf("team %s: %w", m.Team, ErrNoAgents)
		}
		if lock := d.be.sendLock(); lock != "" {
			if _, err := tx.ExecContext(ctx, lock, m.Team); err != nil {
				return err
			}
		}
		for _, n := range to {
			c := m
			c.To = n
			if err := tx.QueryRowContext(ctx,
				insertMessage+`VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
				c.Team, c.From, c.To, c.Subject, c.Body, Preview(c.Body), replyTo, nanos(c.CreatedAt)).Scan(&c.ID); err != nil {
				return err
			}
			out = append(out, c)
		}
		return nil
	}
	const op = "send to every agent"
	err := d.inTx(ctx, op, func(tx *sql.Tx) error { return store(ctx, tx) })
	if answerLost(ctx, err) {
		// The commit went out and its answer did not come back.
		var found []Message
		if found, _, err = d.sendAgain(ctx, op, m, false, store); len(found) > 0 {
			out = found
		}
	} else if d.sendInterrupted(ctx, err) {
		err = d.unanswered(op, err)
	}
	if err != nil {
		return nil, d.fail(op, err)
	}
	return out, nil
}

// TeamKnown reports whether team has any agent recorded or any message: a
// team that has neither is most likely a typo. A SQLite drain or a stale
// that found nothing answered it in the read that found nothing, as the
// note after either asks it next; TeamKnown takes that answer once, within
// a second of that read (seenFor), and asks the database otherwise.
func (d *DB) TeamKnown(ctx context.Context, team string) (bool, error) {
	if known, ok := d.seen.take(team, d.now()); ok {
		return known, nil
	}
	var known bool
	err := d.db.QueryRowContext(ctx, `SELECT `+teamKnown, team, team).Scan(&known)
	return known, d.fail("look up team", err)
}

// teamKnown is TeamKnown's answer as an expression of two arguments, the
// team twice.
const teamKnown = `EXISTS (SELECT 1 FROM agents WHERE team = ?) OR EXISTS (SELECT 1 FROM messages WHERE team = ?)`

// teamSeen holds what the last empty drain or stale learned of its team,
// for the TeamKnown that follows it.
type teamSeen struct {
	mu    sync.Mutex
	team  string
	known bool
	at    time.Time
}

// seenFor is how long an empty read's answer stands in for TeamKnown's:
// the note follows its read at once, and a caller asking later (a
// long-lived process) gets the database's answer.
const seenFor = time.Second

func (s *teamSeen) set(team string, known bool, at time.Time) {
	s.mu.Lock()
	s.team, s.known, s.at = team, known, at
	s.mu.Unlock()
}

func (s *teamSeen) take(team string, now time.Time) (known, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.team == "" || s.team != team || now.Sub(s.at) >= seenFor || now.Before(s.at) {
		return false, false
	}
	known, s.team = s.known, ""
	return known, true
}

// Unread is how much work waits in one inbox.
type Unread struct {
	Count int
	// Oldest is when the oldest unread message was sent (zero when none).
	Oldest time.Time
}

// UnreadByRecipient counts each recipient's unread messages in team, from
// the partial index of unread messages alone.
func (d *DB) UnreadByRecipient(ctx context.Context, team string) (map[string]Unread, error) {
	rows, err := d.db.QueryContext(ctx,
		`SELECT recipient, COUNT(*), MIN(created_at) FROM messages INDEXED BY messages_unread_by_age
		 WHERE team = ? AND read_at IS NULL GROUP BY recipient`, team)
	if err != nil {
		return nil, d.fail("count unread messages", err)
	}
	defer rows.Close()
	out := map[string]Unread{}
	for rows.Next() {
		var to string
		var u Unread
		var oldest sql.NullInt64
		if err := rows.Scan(&to, &u.Count, &oldest); err != nil {
			return nil, d.fail("count unread messages", err)
		}
		u.Oldest = fromNanos(oldest)
		out[to] = u
	}
	return out, d.fail("count unread messages", rows.Err())
}

// PruneMessages removes team's read messages sent before cutoff (never an
// unread one, nor one that an unread reply answers: its sender takes that
// reply by --reply-to, which wants the message to exist) and returns how
// many; with dryRun it only counts them.
func (d *DB) PruneMessages(ctx context.Context, team string, cutoff time.Time, dryRun bool) (int64, error) {
	const where = `team = ? AND read_at IS NOT NULL AND created_at < ?
		AND id NOT IN (SELECT reply_to FROM messages WHERE team = ? AND read_at IS NULL AND reply_to IS NOT NULL)`
	if dryRun {
		var n int64
		err := d.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM messages WHERE `+where, team, nanos(cutoff), team).Scan(&n)
		return n, d.fail("count old messages", err)
	}
	var n int64
	err := d.inTx(ctx, "prune messages", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE `+where, team, nanos(cutoff), team)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}
