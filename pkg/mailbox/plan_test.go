package mailbox

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Stale must be answered from the covering index alone: a plan that reads
// the table would scale with the mailbox instead of with its unread part.
func TestStaleUsesCoveringIndex(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "t.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, byRecipient := range []bool{false, true} {
		args := []any{"t", time.Now().UnixNano()}
		if byRecipient {
			args = append(args, "w")
		}
		rows, err := db.db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+staleQuery(byRecipient), args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		if p := strings.Join(plan, "\n"); !strings.Contains(p, "USING COVERING INDEX messages_unread_by_age") {
			t.Errorf("stale (by recipient: %v) reads more than its index:\n%s", byRecipient, p)
		}
	}
}
