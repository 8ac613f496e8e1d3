package mailbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Kinds of Slack event stored for an ask.
const (
	SlackReaction = "reaction"
	SlackReply    = "reply"
)

// SlackEvent is a Slack event on an ask's message or thread: a reaction on
// the question's message, or a reply in its thread. It is stored as Slack
// delivered it (after teamkit dropped bots, edits and other subtypes) and
// judged by resume.
type SlackEvent struct {
	AskID int64
	// Key identifies the event, so that a redelivery stores nothing new.
	Key      string
	Kind     string // SlackReaction or SlackReply
	User     string // the Slack user ID
	Reaction string // the emoji name, for a reaction
	Text     string // what the person wrote, for a reply
	Channel  string
	ThreadTS string // the ask's message
	TS       string // the reply's ts, or the reaction's event_ts
}

// SetAskSlackPosted records the Slack message that mirrors the question,
// once: it reports false (and changes nothing) when one is recorded already.
func (d *DB) SetAskSlackPosted(ctx context.Context, id int64, channel, ts string) (bool, error) {
	res, err := d.db.ExecContext(ctx,
		`UPDATE asks SET slack_channel = ?, slack_ts = ?, slack_error = '' WHERE id = ? AND slack_ts = ''`, channel, ts, id)
	if err != nil {
		return false, d.fail("record slack post", err)
	}
	n, err := res.RowsAffected()
	return n == 1, d.fail("record slack post", err)
}

// SetAskSlackError records why posting the question to Slack failed.
func (d *DB) SetAskSlackError(ctx context.Context, id int64, msg string) error {
	_, err := d.db.ExecContext(ctx, `UPDATE asks SET slack_error = ? WHERE id = ? AND slack_ts = ''`, msg, id)
	return d.fail("record slack post error", err)
}

// AskBySlackMessage returns the ask whose question is the Slack message
// (channel, ts).
func (d *DB) AskBySlackMessage(ctx context.Context, channel, ts string) (Ask, error) {
	a, err := scanAsk(d.db.QueryRowContext(ctx,
		`SELECT `+askCols+` FROM asks WHERE slack_channel = ? AND slack_ts = ? AND slack_ts != ''`, channel, ts))
	if errors.Is(err, sql.ErrNoRows) {
		err = fmt.Errorf("ask of slack message %s %s: %w", channel, ts, ErrNotFound)
	}
	return a, d.fail("read ask", err)
}

// AddSlackEvent stores e while its ask is awaiting, unless an event with
// its key is stored for the ask already; it reports whether it stored it.
// The state is checked in the same statement, so an event never outlives
// the resume that clears its ask's events. (The casts give PostgreSQL the
// parameters' types, which a SELECT list does not.)
func (d *DB) AddSlackEvent(ctx context.Context, e SlackEvent) (bool, error) {
	res, err := d.db.ExecContext(ctx,
		`INSERT INTO slack_events (ask_id, event_key, kind, slack_user, reaction, text, channel, thread_ts, ts, created_at)
		 SELECT CAST(? AS BIGINT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT),
		        CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS BIGINT)
		 WHERE EXISTS (SELECT 1 FROM asks WHERE id = ? AND state = ?)
		 ON CONFLICT DO NOTHING`,
		e.AskID, e.Key, e.Kind, e.User, e.Reaction, e.Text, e.Channel, e.ThreadTS, e.TS, nanos(d.now()), e.AskID, AskAwaiting)
	if err != nil {
		return false, d.fail("record slack event", err)
	}
	n, err := res.RowsAffected()
	return n == 1, d.fail("record slack event", err)
}

// SlackEvents lists the events stored for ask id, in the order Slack
// stamped them (ts), then as they were stored.
func (d *DB) SlackEvents(ctx context.Context, id int64) ([]SlackEvent, error) {
	rows, err := d.db.QueryContext(ctx,
		`SELECT ask_id, event_key, kind, slack_user, reaction, text, channel, thread_ts, ts
		 FROM slack_events WHERE ask_id = ? ORDER BY ts, created_at, event_key`, id)
	if err != nil {
		return nil, d.fail("list slack events", err)
	}
	defer rows.Close()
	var out []SlackEvent
	for rows.Next() {
		var e SlackEvent
		if err := rows.Scan(&e.AskID, &e.Key, &e.Kind, &e.User, &e.Reaction, &e.Text, &e.Channel, &e.ThreadTS, &e.TS); err != nil {
			return nil, d.fail("list slack events", err)
		}
		out = append(out, e)
	}
	return out, d.fail("list slack events", rows.Err())
}

// ClearSlackEvents removes the events stored for ask id (once its answer
// has been carried back, nothing else can count).
func (d *DB) ClearSlackEvents(ctx context.Context, id int64) error {
	_, err := d.db.ExecContext(ctx, `DELETE FROM slack_events WHERE ask_id = ?`, id)
	return d.fail("clear slack events", err)
}
