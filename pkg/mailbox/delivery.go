package mailbox

import (
	"context"
	"database/sql"
	"errors"
)

// The delivery of an answer is one state machine on its ask (docs/DESIGN.md,
// "Answer delivery"):
//
//	pending    state=answered, launch_run='',  resumed_run=''
//	launching  state=answered, launch_run=R,   resumed_run=''
//	delivered  state=answered, resumed_run=R
//
// resume moves pending or launching to launching R (LaunchAnswer) before it
// launches run R; only R's supervisor moves launching R to delivered
// (StartRun), before it starts the agent; resume moves launching back to
// pending (WithdrawLaunch) when it gives up on a launch. Each is a
// compare-and-set, so a launch resume withdrew or replaced can never start.

// ErrWithdrawn is StartRun's answer to a supervisor whose launch is no longer
// the one its ask waits for: its agent must not start.
var ErrWithdrawn = errors.New("the launch was withdrawn: the answer goes with another run")

// ErrSuperseded is StartRun's answer to a supervisor whose run is no longer
// its agent's (another was launched meanwhile) or has been recorded as
// ended: its agent must not start, or two would run under one name, one of
// them recorded nowhere.
var ErrSuperseded = errors.New("the run is no longer the agent's current one, or has ended")

// LaunchAnswer records run as the launch that is to carry ask id's answer,
// replacing (and so fencing) any earlier launch not yet started. It reports
// false when the answer is no longer pending or launching: delivered
// already, or the ask is not answered.
func (d *DB) LaunchAnswer(ctx context.Context, id int64, run string) (bool, error) {
	res, err := d.db.ExecContext(ctx,
		`UPDATE asks SET launch_run = ? WHERE id = ? AND state = ? AND resumed_run = ''`, run, id, AskAnswered)
	if err != nil {
		return false, d.fail("record launch", err)
	}
	n, err := res.RowsAffected()
	return n == 1, d.fail("record launch", err)
}

// WithdrawLaunch puts ask id's answer back to pending unless it was
// delivered: the launch it waited for can then no longer start. It reports
// false when the answer was delivered after all.
func (d *DB) WithdrawLaunch(ctx context.Context, id int64) (bool, error) {
	res, err := d.db.ExecContext(ctx, `UPDATE asks SET launch_run = '' WHERE id = ? AND resumed_run = ''`, id)
	if err != nil {
		return false, d.fail("withdraw launch", err)
	}
	n, err := res.RowsAffected()
	return n == 1, d.fail("withdraw launch", err)
}

// StartRun is the supervisor recording its run as started, before it starts
// the agent: its exact identity, host and first heartbeat, and, for a run
// that carries ask's answer (ask > 0), the answer as delivered by run, in
// the same transaction. A launch that is no longer the one the ask waits for
// gets ErrWithdrawn and nothing is written. Like SetAgentState it never
// touches another run or a run already ended: a run that is not the
// agent's current one, or ended, gets ErrSuperseded, and nothing is
// written either.
func (d *DB) StartRun(ctx context.Context, team, name, run string, p Process, ask int64) error {
	return d.inTx(ctx, "record run start", func(tx *sql.Tx) error {
		if ask > 0 {
			res, err := tx.ExecContext(ctx,
				`UPDATE asks SET resumed_run = ?, launch_run = '' WHERE id = ? AND launch_run = ? AND resumed_run = ''`, run, ask, run)
			if err := oneRow(res, err, ErrWithdrawn); err != nil {
				return err
			}
		}
		now := d.stamp()
		res, err := tx.ExecContext(ctx,
			`UPDATE agents SET state = ?, pid = ?, pid_start = ?, boot_id = ?, host = ?,
			   heartbeat_at = `+d.clockSQL()+`, heartbeat_ms = ?, updated_at = `+d.clockSQL()+`,
			   active_at = `+d.clockSQL()+`
			 WHERE team = ? AND name = ? AND run = ? AND state NOT IN ('`+StateExited+`', '`+StateFailed+`')`,
			StateRunning, p.PID, int64(p.Start), p.Boot, p.Host, now, p.Heartbeat.Milliseconds(), now, now, team, name, run)
		return oneRow(res, err, ErrSuperseded)
	})
}

// oneRow is the error of a compare-and-set that must change exactly one
// row: the statement's, or none when it changed none.
func oneRow(res sql.Result, err, none error) error {
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		if err == nil {
			err = none
		}
		return err
	}
	return nil
}

// UnstartRun undoes StartRun's delivery when run's agent never started (its
// exec failed, or its supervisor died before it): the answer is launching
// run again, which resume sees is over and replaces.
func (d *DB) UnstartRun(ctx context.Context, ask int64, run string) error {
	_, err := d.db.ExecContext(ctx,
		`UPDATE asks SET resumed_run = '', launch_run = ? WHERE id = ? AND resumed_run = ?`, run, ask, run)
	return d.fail("undo run start", err)
}
