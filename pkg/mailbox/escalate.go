package mailbox

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// ResumeIntent returns the resume intent of ask id; ok is false when there
// is none. resume reads it back after inserting it, so the time it folds
// into a re-spawned task is the one stored (the oldest, if a crashed pass
// left one behind).
func (d *DB) ResumeIntent(ctx context.Context, id int64) (r ResumeIntent, ok bool, err error) {
	var created sql.NullInt64
	err = d.db.QueryRowContext(ctx, `SELECT ask_id, created_at FROM resume_intents WHERE ask_id = ?`, id).Scan(&r.AskID, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return ResumeIntent{}, false, nil
	}
	if err != nil {
		return ResumeIntent{}, false, d.fail("read resume intent", err)
	}
	r.CreatedAt = fromNanos(created)
	return r, true, nil
}

// SetAskQuestionTime records the GitHub creation time of the ask's question
// comment: resume lists only the comments from then on (the API's `since`),
// in GitHub's clock rather than this machine's.
func (d *DB) SetAskQuestionTime(ctx context.Context, a Ask, t time.Time) error {
	if t.IsZero() {
		return nil
	}
	_, err := d.db.ExecContext(ctx, `UPDATE asks SET question_at = ? WHERE id = ?`, nanos(t), a.ID)
	return d.fail("record question time", err)
}

// AskQuestionTime returns what SetAskQuestionTime stored; zero when unknown.
func (d *DB) AskQuestionTime(ctx context.Context, a Ask) (time.Time, error) {
	var at sql.NullInt64
	err := d.db.QueryRowContext(ctx, `SELECT question_at FROM asks WHERE id = ?`, a.ID).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, d.fail("read question time", err)
	}
	return fromNanos(at), nil
}
