package mailbox_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/teamkit/teamkit/pkg/mailbox"
)

// TestBadValueSaysAnotherProgramWroteIt: a row holding what its column
// cannot (text where a time goes: SQLite keeps whatever another program
// writes) fails a drain and a listing with ErrBadValue and a hint to fix
// the row, not a bare "sql: Scan error"; the message stays unread, and is
// delivered once the row is fixed.
func TestBadValueSaysAnotherProgramWroteIt(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "mail.db")
	db := open(t, path, nil)
	m := send(t, db, "t", "lead", "w", "task")
	r := raw(t, path)
	var at int64
	if err := r.QueryRow(`SELECT created_at FROM messages WHERE id = ?`, m.ID).Scan(&at); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Exec(`UPDATE messages SET created_at = 'yesterday' WHERE id = ?`, m.ID); err != nil {
		t.Fatal(err)
	}
	var got []mailbox.Message
	_, err := db.Drain(ctx, "t", "w", 0, keep(&got))
	var e *mailbox.Error
	if !errors.Is(err, mailbox.ErrBadValue) || !errors.As(err, &e) || e.Hint() == "" || len(got) != 0 {
		t.Fatalf("Drain over a row another program changed = %v (delivered %d); want ErrBadValue with a hint, nothing delivered", err, len(got))
	}
	if _, err := db.List(ctx, "t", "", true); !errors.Is(err, mailbox.ErrBadValue) {
		t.Fatalf("List = %v; want ErrBadValue", err)
	}
	if _, err := r.Exec(`UPDATE messages SET created_at = ? WHERE id = ?`, at, m.ID); err != nil {
		t.Fatal(err)
	}
	if msgs, err := db.Drain(ctx, "t", "w", 0, keep(&got)); err != nil || len(msgs) != 1 || msgs[0].ID != m.ID {
		t.Fatalf("Drain after the row was fixed = %v, %v; want message %d", msgs, err, m.ID)
	}
}
