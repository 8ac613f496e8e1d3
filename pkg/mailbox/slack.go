package mailbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

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

// ClearSlackEvents removes the Slack events stored for ask id once its
// answer has been carried back. teamkit no longer stores any (resume reads
// a Slack answer from the Web API as it stands), but a resume of an
// earlier version, on another host of the same mailbox, may: the table
// and this clean-up go once no such version can be running.
func (d *DB) ClearSlackEvents(ctx context.Context, id int64) error {
	_, err := d.db.ExecContext(ctx, `DELETE FROM slack_events WHERE ask_id = ?`, id)
	return d.fail("clear slack events", err)
}
