package mailbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Ask kinds, states and decisions.
const (
	KindQuestion = "question"
	KindApproval = "approval"

	AskAwaiting = "awaiting"
	AskAnswered = "answered"

	DecisionAnswered = "answered"
	DecisionApproved = "approved"
	DecisionRejected = "rejected"
)

// Ask is a question (or approval request) escalated to a human. The JSON
// names up to answered_at are the contract.
type Ask struct {
	ID         int64     `json:"id"`
	Team       string    `json:"team"`
	Agent      string    `json:"agent"`
	Run        string    `json:"run"`
	Issue      string    `json:"issue"`
	Kind       string    `json:"kind"`
	Question   string    `json:"question"`
	State      string    `json:"state"`
	Answer     string    `json:"answer"`
	DecidedBy  string    `json:"decided_by"`
	Decision   string    `json:"decision"`
	CreatedAt  time.Time `json:"created_at"`
	AnsweredAt time.Time `json:"answered_at,omitzero"`
	// Source says where the answer came from ("local", or the comment's URL).
	Source     string `json:"source"`
	CommentID  int64  `json:"comment_id"`
	CommentURL string `json:"comment_url"`
	PostError  string `json:"post_error"`
	ResumedRun string `json:"resumed_run"`
	// LaunchRun is the run a resume pass launched (or is launching) with
	// the answer, not yet started (see DB.StartRun); "" when none.
	LaunchRun string `json:"launch_run,omitempty"`
	// The Slack message that mirrors the question ("" until posted), and
	// why posting it failed.
	SlackChannel string `json:"slack_channel"`
	SlackTS      string `json:"slack_ts"`
	SlackError   string `json:"slack_error"`
	// BudgetRun is the run whose budget this ask is about, filed by that
	// run's supervisor (budget.go); "" for an agent's own ask.
	BudgetRun string `json:"budget_run,omitempty"`
}

// MarshalJSON writes answered_at as null while the ask awaits its answer,
// as every absent time of the JSON contract is (read_at, ended_at…).
func (a Ask) MarshalJSON() ([]byte, error) {
	type plain Ask
	var answered *time.Time
	if !a.AnsweredAt.IsZero() {
		t := a.AnsweredAt.UTC()
		answered = &t
	}
	return marshalNoEscape(struct {
		plain
		AnsweredAt *time.Time `json:"answered_at"`
	}{plain(a), answered})
}

// Decision is what a human said.
type Decision struct {
	Answer    string
	DecidedBy string
	Decision  string // DecisionAnswered, DecisionApproved or DecisionRejected
	Source    string
}

const askCols = `id, team, agent, run, issue, kind, question, state, answer, decided_by, decision,
	created_at, answered_at, source, comment_id, comment_url, post_error, resumed_run,
	slack_channel, slack_ts, slack_error, launch_run, budget_run`

func scanAsk(r rowScanner) (Ask, error) {
	var a Ask
	var created, answered sql.NullInt64
	err := r.Scan(&a.ID, &a.Team, &a.Agent, &a.Run, &a.Issue, &a.Kind, &a.Question, &a.State, &a.Answer,
		&a.DecidedBy, &a.Decision, &created, &answered, &a.Source, &a.CommentID, &a.CommentURL, &a.PostError, &a.ResumedRun,
		&a.SlackChannel, &a.SlackTS, &a.SlackError, &a.LaunchRun, &a.BudgetRun)
	a.CreatedAt, a.AnsweredAt = fromNanos(created), fromNanos(answered)
	return a, err
}

// CreateAsk records a as awaiting. An agent run asks once: when the run
// already has an ask, that one is returned with created=false, so re-running
// ask never makes (or posts) a second.
func (d *DB) CreateAsk(ctx context.Context, a Ask) (out Ask, created bool, err error) {
	err = d.inTx(ctx, "record ask", func(tx *sql.Tx) error {
		if a.Run != "" {
			out, err = scanAsk(tx.QueryRowContext(ctx, `SELECT `+askCols+` FROM asks WHERE team = ? AND agent = ? AND run = ?`, a.Team, a.Agent, a.Run))
			if err == nil {
				return nil
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		created = true
		out, err = scanAsk(tx.QueryRowContext(ctx,
			`INSERT INTO asks (team, agent, run, issue, kind, question, state, created_at)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING `+askCols,
			a.Team, a.Agent, a.Run, a.Issue, a.Kind, a.Question, AskAwaiting, nanos(d.now())))
		return err
	})
	return out, created, err
}

// Ask returns one ask.
func (d *DB) Ask(ctx context.Context, id int64) (Ask, error) {
	a, err := scanAsk(d.db.QueryRowContext(ctx, `SELECT `+askCols+` FROM asks WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		err = fmt.Errorf("ask %d: %w", id, ErrNotFound)
	}
	return a, d.fail("read ask", err)
}

// Asks lists a team's asks in state ("" for all), oldest first.
func (d *DB) Asks(ctx context.Context, team, state string) ([]Ask, error) {
	q := `SELECT ` + askCols + ` FROM asks WHERE team = ?`
	args := []any{team}
	if state != "" {
		q += ` AND state = ?`
		args = append(args, state)
	}
	rows, err := d.db.QueryContext(ctx, q+` ORDER BY id`, args...)
	if err != nil {
		return nil, d.fail("list asks", err)
	}
	defer rows.Close()
	var out []Ask
	for rows.Next() {
		a, err := scanAsk(rows)
		if err != nil {
			return nil, d.fail("list asks", err)
		}
		out = append(out, a)
	}
	return out, d.fail("list asks", rows.Err())
}

// SetAskPosted records the issue comment that carries the question and
// clears any earlier post error.
func (d *DB) SetAskPosted(ctx context.Context, id, commentID int64, url string) error {
	// Only the first comment recorded stands: a second poster (a pass
	// racing ask) must not move the question past replies to the first.
	_, err := d.db.ExecContext(ctx, `UPDATE asks SET comment_id = ?, comment_url = ?, post_error = '' WHERE id = ? AND comment_id = 0`, commentID, url, id)
	return d.fail("record posted ask", err)
}

// SetAskPostError records why posting the question failed, for ask list.
func (d *DB) SetAskPostError(ctx context.Context, id int64, msg string) error {
	_, err := d.db.ExecContext(ctx, `UPDATE asks SET post_error = ? WHERE id = ?`, msg, id)
	return d.fail("record ask post error", err)
}

// DecideAsk records a decision with a compare-and-set from awaiting: it
// reports true only for the first writer, so two passes (or ask answer racing
// a GitHub reply) can never both act on one ask.
func (d *DB) DecideAsk(ctx context.Context, id int64, dec Decision) (bool, error) {
	res, err := d.db.ExecContext(ctx,
		`UPDATE asks SET state = ?, answer = ?, decided_by = ?, decision = ?, source = ?, answered_at = ?
		 WHERE id = ? AND state = ?`,
		AskAnswered, dec.Answer, dec.DecidedBy, dec.Decision, dec.Source, nanos(d.now()), id, AskAwaiting)
	if err != nil {
		return false, d.fail("record answer", err)
	}
	n, err := res.RowsAffected()
	return n == 1, d.fail("record answer", err)
}

// ResumeIntent marks a resume in flight.
type ResumeIntent struct {
	AskID     int64
	CreatedAt time.Time
}

// AddAnswerIntent inserts the intent for ask id if absent, and only while
// the ask awaits its answer: the intent a claim writes before its
// compare-and-set (DecideAsk). An ask decided already has the intent of
// whoever decided it, or had it and was settled: a losing claim's intent
// would outlive that and report the same answer resumed a second time.
func (d *DB) AddAnswerIntent(ctx context.Context, id int64) error {
	_, err := d.db.ExecContext(ctx, `INSERT INTO resume_intents (ask_id, created_at)
		SELECT CAST(? AS BIGINT), CAST(? AS BIGINT) WHERE EXISTS (SELECT 1 FROM asks WHERE id = ? AND state = ?)
		ON CONFLICT DO NOTHING`,
		id, nanos(d.now()), id, AskAwaiting)
	return d.fail("record resume intent", err)
}

// AddDeliveryIntent inserts the intent for ask id if absent, and only while
// its answer is still to be delivered (answered, resumed_run empty): the
// intent a pass writes before it re-spawns the agent. An answer delivered
// and settled meanwhile (by another re-spawn of the same pass) gets none,
// which would outlive it and report it resumed a second time.
func (d *DB) AddDeliveryIntent(ctx context.Context, id int64) error {
	_, err := d.db.ExecContext(ctx, `INSERT INTO resume_intents (ask_id, created_at)
		SELECT CAST(? AS BIGINT), CAST(? AS BIGINT) WHERE EXISTS (SELECT 1 FROM asks WHERE id = ? AND state = ? AND resumed_run = '')
		ON CONFLICT DO NOTHING`,
		id, nanos(d.now()), id, AskAnswered)
	return d.fail("record resume intent", err)
}

// ClearResumeIntent removes the intent for ask id.
func (d *DB) ClearResumeIntent(ctx context.Context, id int64) error {
	_, err := d.db.ExecContext(ctx, `DELETE FROM resume_intents WHERE ask_id = ?`, id)
	return d.fail("clear resume intent", err)
}

// ResumeIntents lists the intents left for team's asks, oldest first.
func (d *DB) ResumeIntents(ctx context.Context, team string) ([]ResumeIntent, error) {
	rows, err := d.db.QueryContext(ctx,
		`SELECT r.ask_id, r.created_at FROM resume_intents r JOIN asks a ON a.id = r.ask_id
		 WHERE a.team = ? ORDER BY r.ask_id`, team)
	if err != nil {
		return nil, d.fail("list resume intents", err)
	}
	defer rows.Close()
	var out []ResumeIntent
	for rows.Next() {
		var r ResumeIntent
		var created sql.NullInt64
		if err := rows.Scan(&r.AskID, &created); err != nil {
			return nil, d.fail("list resume intents", err)
		}
		r.CreatedAt = fromNanos(created)
		out = append(out, r)
	}
	return out, d.fail("list resume intents", rows.Err())
}

// ETag returns the stored ETag for a GitHub URL ("" when none).
func (d *DB) ETag(ctx context.Context, url string) (string, error) {
	var tag string
	err := d.db.QueryRowContext(ctx, `SELECT etag FROM etags WHERE url = ?`, url).Scan(&tag)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return tag, d.fail("read etag", err)
}

// SetETag stores the ETag for a GitHub URL.
func (d *DB) SetETag(ctx context.Context, url, etag string) error {
	_, err := d.db.ExecContext(ctx,
		`INSERT INTO etags (url, etag, updated_at) VALUES (?, ?, ?)
		 ON CONFLICT (url) DO UPDATE SET etag = excluded.etag, updated_at = excluded.updated_at`,
		url, etag, nanos(d.now()))
	return d.fail("store etag", err)
}

// Setting returns a team setting; ok is false when unset.
func (d *DB) Setting(ctx context.Context, team, key string) (value string, ok bool, err error) {
	err = d.db.QueryRowContext(ctx, `SELECT value FROM settings WHERE team = ? AND key = ?`, team, key).Scan(&value)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	return value, err == nil, d.fail("read setting", err)
}

// SetSetting sets a team setting; an empty value removes it.
func (d *DB) SetSetting(ctx context.Context, team, key, value string) error {
	var err error
	if value == "" {
		_, err = d.db.ExecContext(ctx, `DELETE FROM settings WHERE team = ? AND key = ?`, team, key)
	} else {
		_, err = d.db.ExecContext(ctx,
			`INSERT INTO settings (team, key, value) VALUES (?, ?, ?)
			 ON CONFLICT (team, key) DO UPDATE SET value = excluded.value`, team, key, value)
	}
	return d.fail("write setting", err)
}
