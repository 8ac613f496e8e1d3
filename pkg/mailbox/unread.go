package mailbox

import "context"

// UnreadOf counts team/to's unread messages and returns the newest one's id
// (0 when none), from the index of unread messages alone: what a hook that
// runs at every turn of an agent asks, without reading a body.
func (d *DB) UnreadOf(ctx context.Context, team, to string) (count int, newest int64, err error) {
	err = d.db.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(MAX(id), 0) FROM `+unreadByRecipient+`
		 WHERE team = ? AND recipient = ? AND read_at IS NULL`, team, to).Scan(&count, &newest)
	return count, newest, d.fail("count unread messages", err)
}
