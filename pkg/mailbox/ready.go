package mailbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ReadyMark is an agent's readiness sentinel.
type ReadyMark struct {
	Team       string    `json:"team"`
	Name       string    `json:"name"`
	Run        string    `json:"run"`
	MarkedAt   time.Time `json:"marked_at"`
	ConsumedAt time.Time `json:"consumed_at,omitzero"`
}

// ErrMarkStands: the agent's current run has marked, and a mark of another
// run (an earlier launch's, or one made outside the run) would replace it.
var ErrMarkStands = errors.New("its current run has marked ready, and a mark of another run would replace that mark and never count")

// MarkReady sets the agent's mark for run, replacing any earlier one but
// the mark of the agent's current run (ErrMarkStands): a mark that can
// never count must not erase the one spawn waits for.
func (d *DB) MarkReady(ctx context.Context, team, name, run string) error {
	res, err := d.db.ExecContext(ctx,
		`INSERT INTO ready (team, name, run, marked_at, consumed_at) VALUES (?, ?, ?, ?, NULL)
		 ON CONFLICT (team, name) DO UPDATE SET run = excluded.run, marked_at = excluded.marked_at, consumed_at = NULL
		 WHERE ready.run = excluded.run
		    OR NOT EXISTS (SELECT 1 FROM agents a WHERE a.team = ready.team AND a.name = ready.name AND a.run = ready.run)`,
		team, name, run, nanos(d.now()))
	if err != nil {
		return d.fail("mark ready", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return d.fail("mark ready", err)
	}
	if n == 0 {
		return fmt.Errorf("mark %s/%s ready for run %q: %w", team, name, run, ErrMarkStands)
	}
	// The run is ready from its mark on, whether or not a spawn waits to
	// take the mark (a type without a handshake, a spawn interrupted): the
	// roster says so at once. A run not yet recorded running, or ended, or
	// not the agent's current one is left as it is.
	_, err = d.db.ExecContext(ctx, `UPDATE agents SET state = ?, updated_at = `+d.clockSQL()+`
		WHERE team = ? AND name = ? AND run = ? AND state = ?`, StateReady, d.stamp(), team, name, run, StateRunning)
	return d.fail("mark ready", err)
}

// ClearReady removes the agent's mark, whatever run made it.
func (d *DB) ClearReady(ctx context.Context, team, name string) error {
	return d.fail("clear ready mark", clearReady(ctx, d.db, team, name))
}

func clearReady(ctx context.Context, db execer, team, name string) error {
	_, err := db.ExecContext(ctx, `DELETE FROM ready WHERE team = ? AND name = ?`, team, name)
	return err
}

// Ready returns the agent's mark; ok is false when there is none.
func (d *DB) Ready(ctx context.Context, team, name string) (m ReadyMark, ok bool, err error) {
	var consumed, marked sql.NullInt64
	err = d.db.QueryRowContext(ctx,
		`SELECT team, name, run, marked_at, consumed_at FROM ready WHERE team = ? AND name = ?`,
		team, name).Scan(&m.Team, &m.Name, &m.Run, &marked, &consumed)
	if errors.Is(err, sql.ErrNoRows) {
		return ReadyMark{}, false, nil
	}
	if err != nil {
		return ReadyMark{}, false, d.fail("check ready mark", err)
	}
	m.MarkedAt, m.ConsumedAt = fromNanos(marked), fromNanos(consumed)
	return m, true, nil
}

// ReadyOf is Ready beside the run of the agent's record (run is "" when
// it has none): what a check compares the mark with, in one read.
func (d *DB) ReadyOf(ctx context.Context, team, name string) (m ReadyMark, ok bool, run string, err error) {
	var agentRun, markRun sql.NullString
	var consumed, marked sql.NullInt64
	err = d.db.QueryRowContext(ctx,
		`SELECT a.run, r.run, r.marked_at, r.consumed_at
		 FROM (SELECT CAST(? AS TEXT) AS team, CAST(? AS TEXT) AS name) AS k
		 LEFT JOIN agents a ON a.team = k.team AND a.name = k.name
		 LEFT JOIN ready r ON r.team = k.team AND r.name = k.name`,
		team, name).Scan(&agentRun, &markRun, &marked, &consumed)
	if err != nil {
		return ReadyMark{}, false, "", d.fail("check ready mark", err)
	}
	if !marked.Valid {
		return ReadyMark{}, false, agentRun.String, nil
	}
	return ReadyMark{Team: team, Name: name, Run: markRun.String, MarkedAt: fromNanos(marked), ConsumedAt: fromNanos(consumed)}, true, agentRun.String, nil
}

// ConsumeReady claims the fresh mark of run: it reports true once, for the
// first caller that sees the mark, and sets consumed_at so the same mark can
// never again pass for a new signal.
func (d *DB) ConsumeReady(ctx context.Context, team, name, run string) (bool, error) {
	res, err := d.db.ExecContext(ctx,
		`UPDATE ready SET consumed_at = ? WHERE team = ? AND name = ? AND run = ? AND consumed_at IS NULL`,
		nanos(d.now()), team, name, run)
	if err != nil {
		return false, d.fail("consume ready mark", err)
	}
	n, err := res.RowsAffected()
	return n == 1, d.fail("consume ready mark", err)
}
