package mailbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
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

// questionAtKey is the team setting that holds when GitHub says the ask's
// question comment was created. The settings table is shared with resume's
// pause switch; the "ask/" prefix keeps these keys apart from user settings.
func questionAtKey(id int64) string { return "ask/" + strconv.FormatInt(id, 10) + "/question_at" }

// SetAskQuestionTime records the GitHub creation time of the ask's question
// comment: resume lists only the comments from then on (the API's `since`),
// in GitHub's clock rather than this machine's.
func (d *DB) SetAskQuestionTime(ctx context.Context, a Ask, t time.Time) error {
	if t.IsZero() {
		return nil
	}
	return d.SetSetting(ctx, a.Team, questionAtKey(a.ID), t.UTC().Format(time.RFC3339Nano))
}

// AskQuestionTime returns what SetAskQuestionTime stored; zero when unknown.
func (d *DB) AskQuestionTime(ctx context.Context, a Ask) (time.Time, error) {
	v, ok, err := d.Setting(ctx, a.Team, questionAtKey(a.ID))
	if err != nil || !ok {
		return time.Time{}, err
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, d.fail("read question time", fmt.Errorf("setting %s of team %s: %w", questionAtKey(a.ID), a.Team, err))
	}
	return t, nil
}
