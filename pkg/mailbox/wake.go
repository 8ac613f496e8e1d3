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
// its newest unread message, Covered the mail its runs had covered when it
// was listed (woke_through), which a claim moves to Newest and a release
// puts back.
type WakeCandidate struct {
	Agent   Agent
	Newest  int64
	Covered int64
}

// WakeCandidates lists team's wake agents with unread mail newer than
// their last run's launch or wake, by name. Whether one may be re-spawned
// now (its run ended normally, here) is the caller's judgement.
func (d *DB) WakeCandidates(ctx context.Context, team string) ([]WakeCandidate, error) {
	rows, err := d.db.QueryContext(ctx,
		`SELECT `+agentColsAs("a")+`, m.newest, a.woke_through FROM agents a
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
		if err := rows.Scan(append(n.dest(), &c.Newest, &c.Covered)...); err != nil {
			return nil, d.fail("list agents to wake", err)
		}
		c.Agent = n.agent()
		out = append(out, c)
	}
	return out, d.fail("list agents to wake", rows.Err())
}

// ClaimWake records that the mail up to c.Newest wakes c's agent: a
// compare-and-set that only one caller wins while the agent's latest run is
// still c's and its runs have covered what they had when c was listed. It
// reports whether this caller won.
func (d *DB) ClaimWake(ctx context.Context, c WakeCandidate) (bool, error) {
	a := c.Agent
	res, err := d.db.ExecContext(ctx,
		`UPDATE agents SET woke_through = ? WHERE team = ? AND name = ? AND run = ? AND woke_through = ?`,
		c.Newest, a.Team, a.Name, a.Run, c.Covered)
	if err != nil {
		return false, d.fail("claim wake", err)
	}
	n, err := res.RowsAffected()
	return n == 1, d.fail("claim wake", err)
}

// ReleaseWake undoes the claim of c whose re-spawn did not start, so that a
// later pass claims it again: what the agent's runs cover goes back to what
// it was (not to c.Newest-1: the mail before c.Newest may still be unread,
// after a read of c.Newest alone). It does nothing once the agent has
// another run or a newer claim.
func (d *DB) ReleaseWake(ctx context.Context, c WakeCandidate) error {
	a := c.Agent
	_, err := d.db.ExecContext(ctx,
		`UPDATE agents SET woke_through = ? WHERE team = ? AND name = ? AND run = ? AND woke_through = ?`,
		c.Covered, a.Team, a.Name, a.Run, c.Newest)
	if err != nil {
		return d.fail("release wake", fmt.Errorf("agent %s/%s: %w", a.Team, a.Name, err))
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
