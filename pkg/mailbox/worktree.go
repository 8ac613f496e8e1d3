package mailbox

import "context"

// ForgetWorktree clears the worktree and branch recorded with team/name's
// run, once the worktree is removed (spawn stop --clean).
func (d *DB) ForgetWorktree(ctx context.Context, team, name, run string) error {
	_, err := d.db.ExecContext(ctx, `UPDATE agents SET worktree = '', branch = '' WHERE team = ? AND name = ? AND run = ?`, team, name, run)
	return d.fail("forget worktree", err)
}
