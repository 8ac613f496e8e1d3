package mailbox_test

import (
	"context"
	"testing"

	"github.com/teamkit/teamkit/pkg/mailbox"
)

func TestUnreadOf(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		ctx := context.Background()
		db, _, _ := newDB(t, be)
		check := func(wantN int, wantNewest int64) {
			t.Helper()
			n, newest, err := db.UnreadOf(ctx, "t", "w")
			if err != nil || n != wantN || newest != wantNewest {
				t.Fatalf("UnreadOf = %d, %d, %v; want %d, %d", n, newest, err, wantN, wantNewest)
			}
		}
		check(0, 0)
		send(t, db, "t", "boss", "w", "one")
		b := send(t, db, "t", "boss", "w", "two")
		send(t, db, "t", "boss", "other", "not w's")
		send(t, db, "u", "boss", "w", "another team")
		check(2, b.ID)
		if _, err := db.Drain(ctx, "t", "w", 1, func([]mailbox.Message) error { return nil }); err != nil {
			t.Fatal(err)
		}
		check(1, b.ID)
	})
}
