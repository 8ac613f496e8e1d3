package mailbox

import (
	"context"
	"database/sql"
	"time"
)

// StateQueued is a launch recorded but waiting for a slot on its host: the
// host runs as many agents as its cap allows (spawn --max-running,
// TEAMKIT_MAX_AGENTS). Admit moves it on to StateStarting.
const StateQueued = "queued"

// Queued is one launch waiting in its host's queue.
type Queued struct {
	Team, Name, Run string
	// MaxRunning is the cap it waits under: it starts once fewer than
	// this many agents run on its host, and every older entry has started.
	MaxRunning int
	QueuedAt   time.Time
}

// Enqueue records a as its agent's latest launch in state StateQueued,
// waiting on a.Host under a cap of maxRunning, as ReplaceLaunch does: only
// while the agent's record names prev (nil: none), else ErrRelaunched and
// nothing is written. Its place in the queue is the database's clock now.
// It clears the agent's ready mark (ClearReady) with the record.
func (d *DB) Enqueue(ctx context.Context, a Agent, maxRunning int, prev *Agent) error {
	a.State = StateQueued
	// One transaction: a queue row whose launch is not queued is ignored
	// and swept, but one written for a launch that lost its record to
	// another would have replaced that one's row, and a queued launch
	// without its row waits for good. The ready mark goes in it too: only
	// once the record is this launch's (a refused one must not take the
	// mark of the launch that was recorded meanwhile, whose spawn waits
	// for it), and before any admitter can see the launch and start it
	// (its agent's mark must not be taken either).
	return d.txn(ctx, "queue agent", false, func(tx *sql.Tx) error {
		guard, args := replaceGuard(prev)
		res, err := d.recordLaunch(ctx, tx, a, guard, args...)
		if err := oneRow(res, err, ErrRelaunched); err != nil {
			return err
		}
		if err := clearReady(ctx, tx, a.Team, a.Name); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx,
			`INSERT INTO queue (team, name, run, host, max_running, queued_at) VALUES (?, ?, ?, ?, ?, `+d.clockSQL()+`)
			 ON CONFLICT (team, name) DO UPDATE SET run = excluded.run, host = excluded.host,
			   max_running = excluded.max_running, queued_at = excluded.queued_at`,
			a.Team, a.Name, a.Run, a.Host, maxRunning, d.stamp())
		return err
	})
}

// Queue lists the launches waiting on host, oldest first.
func (d *DB) Queue(ctx context.Context, host string) ([]Queued, error) {
	q, err := queueOf(ctx, d.db, host)
	return q, d.fail("list queue", err)
}

// rowsQuerier is what *sql.DB and *sql.Tx share for queries of many rows.
type rowsQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func queueOf(ctx context.Context, db rowsQuerier, host string) ([]Queued, error) {
	rows, err := db.QueryContext(ctx,
		`SELECT q.team, q.name, q.run, q.max_running, q.queued_at FROM queue q
		 JOIN agents a ON a.team = q.team AND a.name = q.name AND a.run = q.run AND a.state = ?
		 WHERE q.host = ? ORDER BY q.queued_at, q.team, q.name`, StateQueued, host)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Queued
	for rows.Next() {
		var q Queued
		var at sql.NullInt64
		if err := rows.Scan(&q.Team, &q.Name, &q.Run, &q.MaxRunning, &at); err != nil {
			return nil, err
		}
		q.QueuedAt = fromNanos(at)
		out = append(out, q)
	}
	return out, rows.Err()
}

// Admit takes launches out of host's queue into StateStarting, oldest
// first, while fewer of host's launches than the entry's cap hold a slot
// (holds judges each one not ended: roster.Holds), and returns them; their
// starters start them. It counts and takes in one serialized transaction,
// so admitters on any number of processes never fill one slot twice, and
// they wait for each other rather than poll. An admitted launch holds its
// slot from here (StateStarting, for roster.StartingGrace).
//
// It looks before it takes the write lock: while every slot is held, as
// for most of a burst's spawns and supervisors, nothing is written, and
// they do not queue on the lock (behind the starts and ends that need it)
// only to find no room.
func (d *DB) Admit(ctx context.Context, host string, holds func(Agent) bool) ([]Queued, error) {
	if queue, held, err := admissible(ctx, d.db, host, holds); err != nil || len(queue) == 0 || held >= queue[0].MaxRunning {
		return nil, d.fail("admit queued agents", err)
	}
	var out []Queued
	err := d.inTx(ctx, "admit queued agents", func(tx *sql.Tx) error {
		out = nil
		queue, held, err := admissible(ctx, tx, host, holds)
		if err != nil {
			return err
		}
		for _, q := range queue {
			if held >= q.MaxRunning {
				break // oldest first: no later entry passes this one
			}
			res, err := tx.ExecContext(ctx,
				`UPDATE agents SET state = ?, updated_at = `+d.clockSQL()+` WHERE team = ? AND name = ? AND run = ? AND state = ?`,
				StateStarting, d.stamp(), q.Team, q.Name, q.Run, StateQueued)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n != 1 {
				continue
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM queue WHERE team = ? AND name = ? AND run = ?`, q.Team, q.Name, q.Run); err != nil {
				return err
			}
			held++
			out = append(out, q)
		}
		return nil
	})
	return out, err
}

// Dequeue takes run of team/name out of the queue: into StateStarting
// (admitted, its slot taken) or StateExited (cancelled). It reports false
// when the run was no longer queued: admitted or cancelled by another.
func (d *DB) Dequeue(ctx context.Context, team, name, run, state string) (bool, error) {
	var ok bool
	err := d.inTx(ctx, "dequeue agent", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx,
			`UPDATE agents SET state = ?, updated_at = `+d.clockSQL()+` WHERE team = ? AND name = ? AND run = ? AND state = ?`,
			state, d.stamp(), team, name, run, StateQueued)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		ok = n == 1
		_, err = tx.ExecContext(ctx, `DELETE FROM queue WHERE team = ? AND name = ? AND run = ?`, team, name, run)
		return err
	})
	return ok, err
}

// HostAgents lists the launches recorded on host that have not ended
// (queued ones included), in every team: what counts against its cap.
// Their tasks are not read (Task is ""): every spawn under a cap counts
// them.
func (d *DB) HostAgents(ctx context.Context, host string) ([]Agent, error) {
	a, err := hostAgents(ctx, d.db, host)
	return a, d.fail("list host agents", err)
}

// admissible is host's queue, oldest first, and how many of host's
// launches hold a slot (holds), counted only when the queue is not empty.
func admissible(ctx context.Context, db rowsQuerier, host string, holds func(Agent) bool) (queue []Queued, held int, err error) {
	queue, err = queueOf(ctx, db, host)
	if err != nil || len(queue) == 0 {
		return nil, 0, err
	}
	agents, err := hostAgents(ctx, db, host)
	for _, a := range agents {
		if holds(a) {
			held++
		}
	}
	return queue, held, err
}

func hostAgents(ctx context.Context, db rowsQuerier, host string) ([]Agent, error) {
	rows, err := db.QueryContext(ctx, `SELECT `+agentCols("a", false)+` FROM agents a WHERE host = ? AND state NOT IN (?, ?)`,
		host, StateExited, StateFailed)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Agent
	var n nullAgent
	dest := n.dest()
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		out = append(out, n.agent())
	}
	return out, rows.Err()
}
