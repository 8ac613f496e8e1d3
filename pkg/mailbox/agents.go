package mailbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Agent states, as spawn and the run supervisor record them.
const (
	StateStarting = "starting" // recorded, process not yet up
	StateRunning  = "running"  // process up, not (yet) confirmed ready
	StateReady    = "ready"    // this run has marked ready
	StateExited   = "exited"   // process ended; ExitCode says how
	StateFailed   = "failed"   // the launch itself failed
)

// Agent is the latest launch of one agent. The JSON names are the contract.
type Agent struct {
	Team      string    `json:"team"`
	Name      string    `json:"name"`
	Type      string    `json:"type"`
	Run       string    `json:"run"`
	PID       int       `json:"pid"`
	State     string    `json:"state"`
	ExitCode  *int      `json:"exit_code"`
	Log       string    `json:"log"`
	Issue     string    `json:"issue"`
	Task      string    `json:"task"`
	Workdir   string    `json:"workdir"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// Host is where the run's processes live; PIDStart (clock ticks after
	// boot) and BootID make PID an exact identity on that host.
	Host     string `json:"host"`
	PIDStart uint64 `json:"pid_start"`
	BootID   string `json:"boot_id"`
	// HeartbeatAt is renewed by the supervisor every Heartbeat while the
	// agent lives; it is how another host tells running from lost.
	HeartbeatAt *time.Time    `json:"heartbeat_at"`
	Heartbeat   time.Duration `json:"-"`
	// ResumeOf names the resume that made this launch (ResumeKey), ""
	// when no resume did: how a pass that crashed after re-spawning the
	// agent is recognised by the next one.
	ResumeOf string `json:"resume_of"`
	// Worktree and Branch are the git worktree the run works in and its
	// branch (spawn --worktree), "" when it has none.
	Worktree string `json:"worktree"`
	Branch   string `json:"branch"`
	// LastActiveAt is when the run's agent last wrote a line of output or
	// a stream event, as of its supervisor's latest heartbeat (so at most
	// one heartbeat old); the run's start until then, nil before it starts.
	LastActiveAt *time.Time `json:"last_active_at"`
	// Wake is WakeMail when mail to the agent re-spawns it once its run
	// has ended normally (spawn --wake, type.conf wake=mail), "" when not.
	Wake string `json:"wake"`
	// ParkedUntil is when the agent's park ends (see parks.go), nil when
	// it is not parked; ParkBackoff is the backoff that set it when the
	// CLI gave no reset time, 0 when it did.
	ParkedUntil *time.Time    `json:"parked_until"`
	ParkBackoff time.Duration `json:"-"`
	// LimitEnds counts its runs in a row that ended on a limit;
	// RespawnFailures its re-spawns by resume in a row that ended in
	// failure (FailingAfter make it failing).
	LimitEnds       int `json:"limit_ends"`
	RespawnFailures int `json:"respawn_failures"`
	// ParkClaim is the run a resume pass claimed the park for, "" if none;
	// ParkClaimedAt when.
	ParkClaim     string     `json:"-"`
	ParkClaimedAt *time.Time `json:"-"`
	// Budget is what each of its runs may use (budget.go), the zero
	// Budget when none.
	Budget Budget `json:"budget"`
}

// WakeMail is Agent.Wake of an agent woken by mail.
const WakeMail = "mail"

// MarshalJSON adds heartbeat_interval_seconds beside the contract's fields.
func (a Agent) MarshalJSON() ([]byte, error) {
	type plain Agent
	return marshalNoEscape(struct {
		plain
		HeartbeatSeconds   float64 `json:"heartbeat_interval_seconds"`
		ParkBackoffSeconds float64 `json:"park_backoff_seconds"`
	}{plain(a), a.Heartbeat.Seconds(), a.ParkBackoff.Seconds()})
}

// Process is how a run's supervisor is identified, and where.
type Process struct {
	PID       int
	Start     uint64
	Boot      string
	Host      string
	Heartbeat time.Duration
}

var agentFields = []string{"team", "name", "type", "run", "pid", "state", "exit_code", "log", "issue", "task", "workdir", "created_at", "updated_at",
	"host", "pid_start", "boot_id", "heartbeat_at", "heartbeat_ms", "resume_of", "worktree", "branch", "active_at", "wake",
	"parked_until", "park_backoff_ms", "limit_ends", "respawn_failures", "park_claim", "park_claimed_at",
	"budget_tokens", "budget_usd"}

func agentColsAs(alias string) string { return agentCols(alias, true) }

// agentCols is agentColsAs, with task false selecting an empty task: a
// task (an issue's text, a plan) often runs to kilobytes, where the rest
// of the row is some 300 bytes, and a look at a team shows no task.
func agentCols(alias string, task bool) string {
	cols := make([]string, len(agentFields))
	for i, f := range agentFields {
		cols[i] = alias + "." + f
		if f == "task" && !task {
			cols[i] = "'' AS task"
		}
	}
	return strings.Join(cols, ", ")
}

// nullAgent scans an agent's row, whose columns may be NULL. A loop of
// rows scans each into the same nullAgent, through the same dest: one of
// each per listing, not per agent (a 200-agent roster allocated 60 KB
// of them).
type nullAgent struct {
	team, name, typ, run, state, log, issue, task, workdir, host, boot, resumeOf, worktree, branch, wake, claim sql.NullString
	pid, exit, created, updated, start, heartbeat, heartbeatMS, active                                          sql.NullInt64
	parked, backoffMS, limitEnds, failures, claimedAt, budgetTokens                                             sql.NullInt64
	budgetUSD                                                                                                   sql.NullFloat64
}

func (n *nullAgent) dest() []any {
	return []any{&n.team, &n.name, &n.typ, &n.run, &n.pid, &n.state, &n.exit, &n.log, &n.issue, &n.task, &n.workdir, &n.created, &n.updated,
		&n.host, &n.start, &n.boot, &n.heartbeat, &n.heartbeatMS, &n.resumeOf, &n.worktree, &n.branch, &n.active, &n.wake,
		&n.parked, &n.backoffMS, &n.limitEnds, &n.failures, &n.claim, &n.claimedAt, &n.budgetTokens, &n.budgetUSD}
}

func (n *nullAgent) agent() Agent {
	a := Agent{Team: n.team.String, Name: n.name.String, Type: n.typ.String, Run: n.run.String,
		PID: int(n.pid.Int64), State: n.state.String, Log: n.log.String, Issue: n.issue.String,
		Task: n.task.String, Workdir: n.workdir.String, CreatedAt: fromNanos(n.created), UpdatedAt: fromNanos(n.updated),
		Host: n.host.String, PIDStart: uint64(n.start.Int64), BootID: n.boot.String,
		Heartbeat: time.Duration(n.heartbeatMS.Int64) * time.Millisecond, ResumeOf: n.resumeOf.String,
		Worktree: n.worktree.String, Branch: n.branch.String, Wake: n.wake.String,
		ParkBackoff: time.Duration(n.backoffMS.Int64) * time.Millisecond, LimitEnds: int(n.limitEnds.Int64),
		RespawnFailures: int(n.failures.Int64), ParkClaim: n.claim.String,
		Budget: Budget{Tokens: n.budgetTokens.Int64, USD: n.budgetUSD.Float64}}
	if n.parked.Valid {
		t := fromNanos(n.parked)
		a.ParkedUntil = &t
	}
	if n.claimedAt.Valid {
		t := fromNanos(n.claimedAt)
		a.ParkClaimedAt = &t
	}
	if n.heartbeat.Valid {
		t := fromNanos(n.heartbeat)
		a.HeartbeatAt = &t
	}
	if n.active.Valid {
		t := fromNanos(n.active)
		a.LastActiveAt = &t
	}
	if n.exit.Valid {
		c := int(n.exit.Int64)
		a.ExitCode = &c
	}
	return a
}

// The agents' times (launched, updated, heartbeat) are the database's
// clock, not the writing host's: liveness compares a heartbeat written on
// one host with the time on another, and hosts' clocks drift apart (a skew
// of a minute made a live agent look lost). On PostgreSQL the server stamps
// them (clock_timestamp()) and DB.Now reads the same clock; a SQLite file
// lives on one machine, whose clock is the only one, so there the process
// stamps them with Options.Now.

// clockSQL is the SQL for "now" in an agents write. It takes one
// argument, d.stamp(): the process's time on SQLite, NULL on PostgreSQL,
// where the server's clock fills it in.
func (d *DB) clockSQL() string {
	if c := d.be.clock(); c != "" {
		return "COALESCE(?, " + c + ")"
	}
	return "?"
}

// stamp is clockSQL's argument.
func (d *DB) stamp() any {
	if d.be.clock() != "" {
		return nil
	}
	return nanos(d.now())
}

// Now is the database's clock, the one the agents' times are written with:
// the server's on PostgreSQL (one query), Options.Now on SQLite. Whoever
// judges a heartbeat's age judges it by this.
func (d *DB) Now(ctx context.Context) (time.Time, error) {
	if d.be.clock() == "" {
		return d.now(), nil
	}
	var n int64
	if err := d.db.QueryRowContext(ctx, `SELECT `+d.be.clock()).Scan(&n); err != nil {
		return time.Time{}, d.fail("read the database's clock", err)
	}
	return time.Unix(0, n).UTC(), nil
}

// RecordLaunch stores a as the agent's latest launch, replacing the last one.
// The launch covers the mail already sent to the agent (its briefing says
// to drain it), so only newer mail can wake it (woke_through).
//
// A launch ends the agent's park (the launch is what the park waited for);
// a launch by a person (no ResumeOf) also clears its failed re-spawns.
func (d *DB) RecordLaunch(ctx context.Context, a Agent) error {
	_, err := d.recordLaunch(ctx, d.db, a, "")
	return d.fail("record agent", err)
}

// ErrRelaunched is ReplaceLaunch's answer when the agent's record no longer
// names the launch its caller found.
var ErrRelaunched = errors.New("another launch of the agent was recorded meanwhile")

// ReplaceLaunch is RecordLaunch only while the agent's record still names
// the launch prev (nil: there was no record), else ErrRelaunched and
// nothing is written. A spawn passes the record it found, and stopped,
// under the agent's lock: a lock the server let go (PostgreSQL ends a
// session's locks with the session: a restart, a connection gone silent)
// lets a second spawn record its launch meanwhile, and the first must then
// not launch, or the agent would run twice.
func (d *DB) ReplaceLaunch(ctx context.Context, a Agent, prev *Agent) error {
	guard, args := replaceGuard(prev)
	res, err := d.recordLaunch(ctx, d.db, a, guard, args...)
	return d.fail("record agent", oneRow(res, err, ErrRelaunched))
}

// replaceGuard is the condition of ReplaceLaunch's update of the record
// that is there, and its arguments: that it names prev's run (none may be
// there when prev is nil).
func replaceGuard(prev *Agent) (string, []any) {
	if prev == nil {
		return "false", nil
	}
	return "agents.run = ?", []any{prev.Run}
}

// execer is what *sql.DB and *sql.Tx share for a statement.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// recordLaunch writes a as the agent's record, replacing the one there only
// where guard ("": always, else SQL with guardArgs) holds of it.
func (d *DB) recordLaunch(ctx context.Context, db execer, a Agent, guard string, guardArgs ...any) (sql.Result, error) {
	if guard != "" {
		guard = " WHERE " + guard
	}
	now := d.stamp()
	args := append([]any{a.Team, a.Name, a.Type, a.Task, a.Issue, a.Workdir, a.Run, a.PID, a.State, a.Log, now, now,
		a.Host, int64(a.PIDStart), a.BootID, a.ResumeOf, a.Worktree, a.Branch, a.Wake, a.Team, a.Name}, guardArgs...)
	return db.ExecContext(ctx,
		`INSERT INTO agents (team, name, type, task, issue, workdir, run, pid, state, exit_code, log, created_at, updated_at,
		   host, pid_start, boot_id, heartbeat_at, heartbeat_ms, resume_of, worktree, branch, wake, woke_through)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, `+d.clockSQL()+`, `+d.clockSQL()+`, ?, ?, ?, NULL, 0, ?, ?, ?, ?,
		   (SELECT COALESCE(MAX(id), 0) FROM messages WHERE team = ? AND recipient = ?))
		 ON CONFLICT (team, name) DO UPDATE SET
		   type = excluded.type, task = excluded.task, issue = excluded.issue, workdir = excluded.workdir,
		   run = excluded.run, pid = excluded.pid, state = excluded.state, exit_code = NULL,
		   log = excluded.log, updated_at = excluded.updated_at,
		   host = excluded.host, pid_start = excluded.pid_start, boot_id = excluded.boot_id,
		   heartbeat_at = NULL, heartbeat_ms = 0, active_at = NULL, resume_of = excluded.resume_of,
		   worktree = excluded.worktree, branch = excluded.branch,
		   wake = excluded.wake, woke_through = excluded.woke_through,
		   parked_until = NULL, park_backoff_ms = 0, park_claim = '', park_claimed_at = NULL,
		   respawn_failures = CASE WHEN excluded.resume_of = '' THEN 0 ELSE agents.respawn_failures END`+guard, args...)
}

// SetAgentState updates the state (and pid when pid > 0, exit code when
// code != nil) of the agent's launch run. A write for an older run is
// ignored, so a late supervisor can't overwrite a newer launch; and once a
// run has ended (exited, failed) only another end state may replace that, so
// a watcher that saw the mark late can't hide the exit code.
func (d *DB) SetAgentState(ctx context.Context, team, name, run, state string, pid int, code *int) error {
	var exit any
	if code != nil {
		exit = *code
	}
	guard := ""
	if state != StateExited && state != StateFailed {
		guard = ` AND state NOT IN ('` + StateExited + `', '` + StateFailed + `')`
	}
	_, err := d.db.ExecContext(ctx,
		`UPDATE agents SET state = ?, pid = CASE WHEN ? > 0 THEN ? ELSE pid END,
		   exit_code = COALESCE(?, exit_code), updated_at = `+d.clockSQL()+`
		 WHERE team = ? AND name = ? AND run = ?`+guard,
		state, pid, pid, exit, d.stamp(), team, name, run)
	return d.fail("update agent", err)
}

// SetAgentPID records the run's supervisor, as its spawner saw it start,
// unless the supervisor has already recorded itself.
func (d *DB) SetAgentPID(ctx context.Context, team, name, run string, p Process) error {
	_, err := d.db.ExecContext(ctx,
		`UPDATE agents SET pid = ?, pid_start = ?, boot_id = ?, host = ?, updated_at = `+d.clockSQL()+`
		 WHERE team = ? AND name = ? AND run = ? AND pid = 0`,
		p.PID, int64(p.Start), p.Boot, p.Host, d.stamp(), team, name, run)
	return d.fail("update agent", err)
}

// Heartbeat renews the run's heartbeat while it has not ended, and with
// it the run's last activity: idle ago by the database's clock (the
// supervisor measures idle on its own clock, so hosts' skew does not
// matter).
func (d *DB) Heartbeat(ctx context.Context, team, name, run string, idle time.Duration) error {
	now := d.stamp()
	_, err := d.db.ExecContext(ctx,
		`UPDATE agents SET heartbeat_at = `+d.clockSQL()+`, active_at = `+d.clockSQL()+` - ?
		 WHERE team = ? AND name = ? AND run = ? AND state NOT IN ('`+StateExited+`', '`+StateFailed+`')`,
		now, now, max(idle, 0).Nanoseconds(), team, name, run)
	return d.fail("renew heartbeat", err)
}

// Agent returns the agent's latest launch; ErrNotFound if never spawned.
func (d *DB) Agent(ctx context.Context, team, name string) (Agent, error) {
	var n nullAgent
	err := d.db.QueryRowContext(ctx, `SELECT `+agentColsAs("a")+` FROM agents a WHERE team = ? AND name = ?`, team, name).Scan(n.dest()...)
	if errors.Is(err, sql.ErrNoRows) {
		return Agent{}, d.fail("read agent", fmt.Errorf("agent %s/%s: %w", team, name, ErrNotFound))
	}
	if err != nil {
		return Agent{}, d.fail("read agent", err)
	}
	return n.agent(), nil
}

// Namesake returns the team and name of an agent recorded under team and
// name spelled in other case ("" when there is none). Names are
// case-sensitive, but the file names of Windows and macOS are not: two such
// agents would share their run files and their spawn lock there.
func (d *DB) Namesake(ctx context.Context, team, name string) (string, string, error) {
	var t, n string
	err := d.db.QueryRowContext(ctx,
		`SELECT team, name FROM agents WHERE lower(team) = lower(?) AND lower(name) = lower(?) AND NOT (team = ? AND name = ?)
		 ORDER BY team, name LIMIT 1`, team, name, team, name).Scan(&t, &n)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", nil
	}
	return t, n, d.fail("look for the agent's namesake", err)
}

// Agents returns every agent of team, by name.
func (d *DB) Agents(ctx context.Context, team string) ([]Agent, error) {
	return d.agents(ctx, team, true)
}

// AgentsWithoutTasks is Agents with every Task "": for a look at the team
// (spawn list, completion, a wait for exits), which never shows a task.
// spawn list of 200 agents with 4 KB tasks took 6% less time without
// them (SQLite still reads the pages a task overflows into, to reach the
// columns after it).
func (d *DB) AgentsWithoutTasks(ctx context.Context, team string) ([]Agent, error) {
	return d.agents(ctx, team, false)
}

func (d *DB) agents(ctx context.Context, team string, task bool) ([]Agent, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT `+agentCols("a", task)+` FROM agents a WHERE team = ? ORDER BY name`, team)
	if err != nil {
		return nil, d.fail("list agents", err)
	}
	defer rows.Close()
	var out []Agent
	var n nullAgent
	dest := n.dest()
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, d.fail("list agents", err)
		}
		out = append(out, n.agent())
	}
	return out, d.fail("list agents", rows.Err())
}

// Teams lists up to limit teams, in name order, that have an agent
// recorded or any mail, for shell completion: the agents table is small,
// and the teams of the messages come by a loose index scan (looseScan).
func (d *DB) Teams(ctx context.Context, limit int) ([]string, error) {
	out, err := queryStrings(ctx, d.db, `SELECT DISTINCT team FROM agents ORDER BY team LIMIT ?`, limit)
	if err != nil {
		return nil, d.fail("list teams", err)
	}
	mail, err := queryStrings(ctx, d.db, looseScan("team", ""), limit)
	out = append(out, mail...)
	slices.Sort(out)
	out = slices.Compact(out)
	return out[:min(len(out), limit)], d.fail("list teams", err)
}

// looseScan is a query of the distinct values of messages' column col
// (where cond holds, with its ? arguments first), in order, at most a LIMIT
// ? of them, by a loose index scan of an index that leads with cond's
// columns and col (messages_by_recipient, messages_by_team): each row is
// one seek for the next value after the last, so the cost grows with the
// values returned, never with the messages, where a plain DISTINCT would
// read every index entry. SQLite and PostgreSQL both evaluate the
// recursive query only as far as the LIMIT asks (TestLooseScans).
func looseScan(col, cond string) string {
	where, and := "", ""
	if cond != "" {
		where, and = " WHERE "+cond, cond+" AND "
	}
	return `WITH RECURSIVE r(v) AS (
	SELECT (SELECT MIN(` + col + `) FROM messages` + where + `)
	UNION ALL
	SELECT (SELECT MIN(` + col + `) FROM messages WHERE ` + and + col + ` > r.v) FROM r WHERE r.v IS NOT NULL
) SELECT v FROM r WHERE v IS NOT NULL LIMIT ?`
}

// Recipients lists up to limit names the team's messages were sent to, in
// name order, for shell completion: one sent mail but never spawned (a
// human, a lead) is as much a drain's name as an agent.
func (d *DB) Recipients(ctx context.Context, team string, limit int) ([]string, error) {
	out, err := queryStrings(ctx, d.db, looseScan("recipient", "team = ?"), team, team, limit)
	return out, d.fail("list recipients", err)
}
