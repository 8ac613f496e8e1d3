package mailbox

import (
	"context"
	"errors"
	"time"
)

// FailingAfter is how many re-spawns by resume in a row that end in failure
// make an agent failing: nothing re-spawns it unattended until a person
// spawns it again.
const FailingAfter = 3

// The backoff of a park whose CLI gave no reset time: BackoffFirst after
// the first limit end in a row, doubling with each, up to BackoffMax.
const (
	BackoffFirst = time.Minute
	BackoffMax   = time.Hour
)

// Backoff is the park of the n-th limit end in a row without a reset time.
func Backoff(n int) time.Duration {
	d := BackoffFirst
	for i := 1; i < n && d < BackoffMax; i++ {
		d *= 2
	}
	return min(d, BackoffMax)
}

// LimitEnd reports whether a run's end parks its agent: a usage limit
// always (until its reset, or backed off), a rate limit only when the CLI
// said when it resets (one it gave up on without a time is a failure like
// any other: the CLI has already retried it).
func LimitEnd(end string, resets *time.Time) bool {
	return end == "usage-limit" || end == "rate-limited" && resets != nil
}

// Failure reports whether a run's end counts toward FailingAfter: any end
// but done, stopped (a person or a timeout stopped it, nothing failed) and
// budget (the supervisor stopped it, and a decider says whether it goes on).
func Failure(end string) bool {
	return end != "" && end != "done" && end != "stopped" && end != "budget"
}

// SettleEnd takes the end of run (its agent's latest launch) into the
// agent's record: a limit end parks it (until resets, or for Backoff of
// its limit ends in a row, measured on the database's clock), any other
// end clears the count of limit ends; a re-spawn by resume (ResumeOf set)
// that failed (other than on a limit, which leaves the count as it is)
// adds one to its failed re-spawns, one that did not clears them. Each run's end counts once (a retried write changes nothing), and
// an end of a run the record no longer names changes nothing.
func (d *DB) SettleEnd(ctx context.Context, team, name, run, end string, resets *time.Time) error {
	a, err := d.Agent(ctx, team, name)
	if errors.Is(err, ErrNotFound) || err == nil && a.Run != run {
		return nil
	}
	if err != nil {
		return err
	}
	limits, failures := 0, a.RespawnFailures
	var until any
	var backoff time.Duration
	if LimitEnd(end, resets) {
		limits = a.LimitEnds + 1
		// A reset already past on the database's clock is taken the
		// first time (codex says a minute, rounded down; an end recorded
		// late is past its reset): the limit may well be over. Past again
		// on the next limit end in a row, it is a stale reset or clocks
		// apart, and would have every pass re-spawn the agent into the
		// same limit: backed off, as a limit with no reset time is. The
		// clock is asked (a query on PostgreSQL) only when it decides.
		if resets != nil && limits == 1 {
			until = nanos(*resets)
		} else {
			now, err := d.Now(ctx)
			if err != nil {
				return err
			}
			if resets != nil && resets.After(now) {
				until = nanos(*resets)
			} else {
				backoff = Backoff(limits)
				until = nanos(now.Add(backoff))
			}
		}
	}
	switch {
	case a.ResumeOf == "":
		failures = 0
	case limits > 0:
		// A limit is no crash: the park is extended (backed off further),
		// and the count of failures stays as it was.
	case Failure(end):
		failures++
	default:
		failures = 0
	}
	_, err = d.db.ExecContext(ctx, `UPDATE agents SET parked_until = ?, park_backoff_ms = ?, limit_ends = ?, respawn_failures = ?,
		  counted_run = ?, park_claim = '', park_claimed_at = NULL
		WHERE team = ? AND name = ? AND run = ? AND counted_run <> ?`,
		until, backoff.Milliseconds(), limits, failures, run, team, name, run, run)
	return d.fail("record the agent's park", err)
}

// ClaimPark claims agent a's park for the launch run, as a compare-and-set
// on the claim a was read with: of two resume passes that saw the same
// park, one wins and re-spawns the agent; the other reports false and
// leaves it. A claim whose launch never got recorded (its pass died) is
// taken over the same way by a pass that judged it abandoned.
func (d *DB) ClaimPark(ctx context.Context, a Agent, run string) (bool, error) {
	res, err := d.db.ExecContext(ctx, `UPDATE agents SET park_claim = ?, park_claimed_at = `+d.clockSQL()+`
		WHERE team = ? AND name = ? AND run = ? AND parked_until IS NOT NULL AND park_claim = ?`,
		run, d.stamp(), a.Team, a.Name, a.Run, a.ParkClaim)
	if err != nil {
		return false, d.fail("claim the agent's park", err)
	}
	n, err := res.RowsAffected()
	return n == 1, d.fail("claim the agent's park", err)
}

// ReleasePark gives back the claim on agent a's park that launch run took
// (ClaimPark) and did not use, so the next pass claims it again.
func (d *DB) ReleasePark(ctx context.Context, a Agent, run string) (bool, error) {
	res, err := d.db.ExecContext(ctx, `UPDATE agents SET park_claim = '', park_claimed_at = NULL
		WHERE team = ? AND name = ? AND run = ? AND park_claim = ?`, a.Team, a.Name, a.Run, run)
	if err != nil {
		return false, d.fail("release the agent's park", err)
	}
	n, err := res.RowsAffected()
	return n == 1, d.fail("release the agent's park", err)
}

// RestorePark puts agent a's park back on launch run, the launch of its
// park's end, when run never ran: it was called off in its host's queue
// (its record is exited with no process and no exit code). Recording that
// launch ended the park; without the park back, nothing would re-spawn
// the agent. It reports whether it did.
func (d *DB) RestorePark(ctx context.Context, a Agent, run string) (bool, error) {
	if a.ParkedUntil == nil {
		return false, nil
	}
	res, err := d.db.ExecContext(ctx, `UPDATE agents SET parked_until = ?, park_backoff_ms = ?, park_claim = '', park_claimed_at = NULL
		WHERE team = ? AND name = ? AND run = ? AND state = ? AND pid = 0 AND exit_code IS NULL AND parked_until IS NULL`,
		nanos(*a.ParkedUntil), a.ParkBackoff.Milliseconds(), a.Team, a.Name, run, StateExited)
	if err != nil {
		return false, d.fail("restore the agent's park", err)
	}
	n, err := res.RowsAffected()
	return n == 1, d.fail("restore the agent's park", err)
}
