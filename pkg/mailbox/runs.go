package mailbox

import (
	"context"
	"database/sql"
	"strings"
	"time"
)

// Tokens is a run's token usage as the model reported it: input not read
// from a cache, output, and the input read from and written to the
// provider's prompt cache.
type Tokens struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cache_read"`
	CacheWrite int64 `json:"cache_write"`
}

// Total is every token counted.
func (t Tokens) Total() int64 { return t.Input + t.Output + t.CacheRead + t.CacheWrite }

// Add is t plus u.
func (t Tokens) Add(u Tokens) Tokens {
	return Tokens{t.Input + u.Input, t.Output + u.Output, t.CacheRead + u.CacheRead, t.CacheWrite + u.CacheWrite}
}

// RunRecord is one run of an agent: when it started and ended, how it ended
// and why, what it used. The JSON names are the contract. End is "" while
// the run goes on; otherwise one of done, failed-auth, usage-limit,
// rate-limited, model-error, crashed, stopped, timeout, budget.
type RunRecord struct {
	Team      string     `json:"team"`
	Name      string     `json:"name"`
	Run       string     `json:"run"`
	Type      string     `json:"type"`
	StartedAt time.Time  `json:"started_at"`
	EndedAt   *time.Time `json:"ended_at"`
	End       string     `json:"end"`
	Detail    string     `json:"detail"`
	ExitCode  *int       `json:"exit_code"`
	Session   string     `json:"session"`
	ResetsAt  *time.Time `json:"resets_at"`
	Tokens    Tokens     `json:"tokens"`
	CostUSD   *float64   `json:"cost_usd"`
	// Briefing is how a re-spawn was briefed: "continued" (its CLI's
	// session, with only what is new), "full: <why>" (it fell back to the
	// full briefing), "" for a person's spawn.
	Briefing string `json:"briefing"`
}

const runCols = `team, name, run, type, started_at, ended_at, ending, detail, exit_code, session, resets_at,
	tokens_input, tokens_output, tokens_cache_read, tokens_cache_write, cost_usd, briefing`

func nullNanos(t *time.Time) any {
	if t == nil {
		return nil
	}
	return nanos(*t)
}

func (r RunRecord) args() []any {
	var code, cost any
	if r.ExitCode != nil {
		code = *r.ExitCode
	}
	if r.CostUSD != nil {
		cost = *r.CostUSD
	}
	return []any{r.Team, r.Name, r.Run, r.Type, nanos(r.StartedAt), nullNanos(r.EndedAt), r.End, r.Detail, code, r.Session,
		nullNanos(r.ResetsAt), r.Tokens.Input, r.Tokens.Output, r.Tokens.CacheRead, r.Tokens.CacheWrite, cost, r.Briefing}
}

// RecordRun stores r, replacing the record of the same run: the supervisor
// writes it when the run starts and again when it ends. A start (no End)
// keeps the end SetRunEnd gave a run it reached first.
func (d *DB) RecordRun(ctx context.Context, r RunRecord) error {
	_, err := d.db.ExecContext(ctx, `INSERT INTO runs (`+runCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (team, run) DO UPDATE SET name = excluded.name, type = excluded.type, started_at = excluded.started_at,
		  ended_at = excluded.ended_at, exit_code = excluded.exit_code,
		  ending = CASE WHEN excluded.ending = '' THEN runs.ending ELSE excluded.ending END,
		  detail = CASE WHEN excluded.ending = '' THEN runs.detail ELSE excluded.detail END,
		  session = excluded.session, resets_at = excluded.resets_at, tokens_input = excluded.tokens_input,
		  tokens_output = excluded.tokens_output, tokens_cache_read = excluded.tokens_cache_read,
		  tokens_cache_write = excluded.tokens_cache_write, cost_usd = excluded.cost_usd, briefing = excluded.briefing`, r.args()...)
	return d.fail("record run", err)
}

// RecordUsage updates the session, tokens and cost of r's run while it goes
// on, and nothing else.
func (d *DB) RecordUsage(ctx context.Context, r RunRecord) error {
	var cost any
	if r.CostUSD != nil {
		cost = *r.CostUSD
	}
	_, err := d.db.ExecContext(ctx, `UPDATE runs SET session = ?, tokens_input = ?, tokens_output = ?, tokens_cache_read = ?,
		  tokens_cache_write = ?, cost_usd = ? WHERE team = ? AND run = ?`,
		r.Session, r.Tokens.Input, r.Tokens.Output, r.Tokens.CacheRead, r.Tokens.CacheWrite, cost, r.Team, r.Run)
	return d.fail("record run usage", err)
}

// AgentRun names one run of one agent.
type AgentRun struct{ Team, Name, Run string }

// SetRunEnd says how runs end before their supervisors record the end: who
// stops a run says why (stopped, timeout), and the supervisor, which sees
// only a signal, keeps that end (see launch.Supervise). The first reason
// given stands; a run that has already ended keeps its end. A run whose
// supervisor has not yet recorded its start (a handshake timeout shorter
// than a loaded machine's start) gets a record with the end, which the start
// keeps. Every run of runs is set in one statement: spawn stop
// --all ends a whole fleet with one write.
func (d *DB) SetRunEnd(ctx context.Context, end, detail string, runs ...AgentRun) error {
	if len(runs) == 0 {
		return nil
	}
	now := nanos(d.now())
	args := make([]any, 0, 6*len(runs))
	for _, r := range runs {
		args = append(args, r.Team, r.Name, r.Run, now, end, detail)
	}
	_, err := d.db.ExecContext(ctx, `INSERT INTO runs (team, name, run, started_at, ending, detail) VALUES (?, ?, ?, ?, ?, ?)`+
		strings.Repeat(", (?, ?, ?, ?, ?, ?)", len(runs)-1)+`
		ON CONFLICT (team, run) DO UPDATE SET ending = excluded.ending, detail = excluded.detail WHERE runs.ending = ''`, args...)
	return d.fail("record run end", err)
}

// SetRunEnded records when run ended, for a run whose supervisor died
// before it could (its guard says so): a run that has an end time keeps it.
func (d *DB) SetRunEnded(ctx context.Context, team, run string, at time.Time) error {
	_, err := d.db.ExecContext(ctx, `UPDATE runs SET ended_at = ? WHERE team = ? AND run = ? AND ended_at IS NULL`, nanos(at), team, run)
	return d.fail("record run end", err)
}

// Runs lists the runs of team (of agent name, when not ""), started at or
// after since, oldest first.
func (d *DB) Runs(ctx context.Context, team, name string, since time.Time) ([]RunRecord, error) {
	q := `SELECT ` + runCols + ` FROM runs WHERE team = ? AND started_at >= ?`
	args := []any{team, nanos(since)}
	if name != "" {
		q += ` AND name = ?`
		args = append(args, name)
	}
	return d.queryRuns(ctx, q+` ORDER BY started_at, run`, args...)
}

// SessionTokens is what the runs of agent name that recorded CLI session
// session used between them.
func (d *DB) SessionTokens(ctx context.Context, team, name, session string) (Tokens, error) {
	var t Tokens
	err := d.db.QueryRowContext(ctx, `SELECT COALESCE(SUM(tokens_input), 0), COALESCE(SUM(tokens_output), 0),
		COALESCE(SUM(tokens_cache_read), 0), COALESCE(SUM(tokens_cache_write), 0) FROM runs WHERE team = ? AND name = ? AND session = ?`,
		team, name, session).Scan(&t.Input, &t.Output, &t.CacheRead, &t.CacheWrite)
	return t, d.fail("read the session's usage", err)
}

// Usage is what a run used: its tokens and, when its CLI says, its cost.
type Usage struct {
	Tokens  Tokens
	CostUSD *float64
	// StartedAt is when the run's supervisor started it.
	StartedAt time.Time
}

// LatestUsage returns what each agent's latest run in team used, by agent
// name (absent for an agent whose run has no record): spawn list's TOKENS
// and COST for a fleet, without the rest of each run's record.
func (d *DB) LatestUsage(ctx context.Context, team string) (map[string]Usage, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT a.name, r.tokens_input, r.tokens_output, r.tokens_cache_read, r.tokens_cache_write, r.cost_usd, r.started_at
		FROM runs r JOIN agents a ON a.team = r.team AND a.run = r.run WHERE r.team = ?`, team)
	if err != nil {
		return nil, d.fail("list runs", err)
	}
	defer rows.Close()
	out := map[string]Usage{}
	for rows.Next() {
		var name string
		var u Usage
		var cost sql.NullFloat64
		var started sql.NullInt64
		if err := rows.Scan(&name, &u.Tokens.Input, &u.Tokens.Output, &u.Tokens.CacheRead, &u.Tokens.CacheWrite, &cost, &started); err != nil {
			return nil, d.fail("list runs", err)
		}
		u.StartedAt = fromNanos(started)
		if cost.Valid {
			u.CostUSD = &cost.Float64
		}
		out[name] = u
	}
	return out, d.fail("list runs", rows.Err())
}

// Run returns one run's record; ErrNotFound when it has none.
func (d *DB) Run(ctx context.Context, team, run string) (RunRecord, error) {
	rs, err := d.queryRuns(ctx, `SELECT `+runCols+` FROM runs WHERE team = ? AND run = ?`, team, run)
	if err != nil {
		return RunRecord{}, err
	}
	if len(rs) == 0 {
		return RunRecord{}, ErrNotFound
	}
	return rs[0], nil
}

func (d *DB) queryRuns(ctx context.Context, q string, args ...any) ([]RunRecord, error) {
	rows, err := d.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, d.fail("list runs", err)
	}
	defer rows.Close()
	var out []RunRecord
	for rows.Next() {
		var r RunRecord
		var started, ended, code, resets sql.NullInt64
		var cost sql.NullFloat64
		if err := rows.Scan(&r.Team, &r.Name, &r.Run, &r.Type, &started, &ended, &r.End, &r.Detail, &code, &r.Session, &resets,
			&r.Tokens.Input, &r.Tokens.Output, &r.Tokens.CacheRead, &r.Tokens.CacheWrite, &cost, &r.Briefing); err != nil {
			return nil, d.fail("list runs", err)
		}
		r.StartedAt = fromNanos(started)
		if ended.Valid {
			t := fromNanos(ended)
			r.EndedAt = &t
		}
		if resets.Valid {
			t := fromNanos(resets)
			r.ResetsAt = &t
		}
		if code.Valid {
			c := int(code.Int64)
			r.ExitCode = &c
		}
		if cost.Valid {
			c := cost.Float64
			r.CostUSD = &c
		}
		out = append(out, r)
	}
	return out, d.fail("list runs", rows.Err())
}
