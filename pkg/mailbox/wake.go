package mailbox

import (
	"context"
	"fmt"
)

// Wake on mail: an agent recorded with Wake set whose newest unread message
// is newer than the mail its runs have covered (woke_through) has mail
// waiting that no run has seen. ClaimWake is the compare-and-set by which
// exactly one resume pass, on any host, re-spawns it for that mail.

// WakeCandidate is an agent with mail no run of it has covered: Newest is
// its newest unread message.
type WakeCandidate struct {
	Agent  Agent
	Newest int64
}

// WakeCandidates lists team's wake agents with unread mail newer than
// their last run's launch or wake, by name. Whether one may be re-spawned
// now (its run ended normally, here) is the caller's judgement.
func (d *DB) WakeCandidates(ctx context.Context, team string) ([]WakeCandidate, error) {
	rows, err := d.db.QueryContext(ctx,
		`SELECT `+agentColsAs("a")+`, m.newest FROM agents a
		 JOIN (SELECT recipient, MAX(id) AS newest FROM messages WHERE team = ? AND read_at IS NULL GROUP BY recipient) m
		   ON m.recipient = a.name
		 WHERE a.team = ? AND a.wake <> '' AND m.newest > a.woke_through
		 ORDER BY a.name`, team, team)
	if err != nil {
		return nil, d.fail("list agents to wake", err)
	}
	defer rows.Close()
	var out []WakeCandidate
	for rows.Next() {
		var n nullAgent
		var c WakeCandidate
		if err := rows.Scan(append(n.dest(), &c.Newest)...); err != nil {
			return nil, d.fail("list agents to wake", err)
		}
		c.Agent = *n.agent()
		out = append(out, c)
	}
	return out, d.fail("list agents to wake", rows.Err())
}

// ClaimWake records that the mail up to message through wakes run's agent:
// a compare-and-set that only one caller wins while the agent's latest run
// is still run and no wake has covered through yet. It reports whether this
// caller won.
func (d *DB) ClaimWake(ctx context.Context, team, name, run string, through int64) (bool, error) {
	res, err := d.db.ExecContext(ctx,
		`UPDATE agents SET woke_through = ? WHERE team = ? AND name = ? AND run = ? AND woke_through < ?`,
		through, team, name, run, through)
	if err != nil {
		return false, d.fail("claim wake", err)
	}
	n, err := res.RowsAffected()
	return n == 1, d.fail("claim wake", err)
}

// ReleaseWake undoes a claim of through whose re-spawn did not start, so
// that a later pass claims it again; it does nothing once the agent has
// another run or a newer claim.
func (d *DB) ReleaseWake(ctx context.Context, team, name, run string, through int64) error {
	_, err := d.db.ExecContext(ctx,
		`UPDATE agents SET woke_through = ? WHERE team = ? AND name = ? AND run = ? AND woke_through = ?`,
		through-1, team, name, run, through)
	if err != nil {
		return d.fail("release wake", fmt.Errorf("agent %s/%s: %w", team, name, err))
	}
	return nil
}

// NewestMessage is the id of the newest message of team (0 when none):
// what a watching loop compares to tell new mail from other changes.
func (d *DB) NewestMessage(ctx context.Context, team string) (int64, error) {
	var id int64
	err := d.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) FROM messages WHERE team = ?`, team).Scan(&id)
	return id, d.fail("read newest message", err)
}
