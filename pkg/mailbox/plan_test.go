package mailbox

import (
	"context"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// migrationFiles lists what the glob it replaced matched, in version
// order, for both backends.
func TestMigrationFiles(t *testing.T) {
	for _, dir := range []string{sqliteBackend{}.migrationDir(), pgBackend{}.migrationDir()} {
		got, err := migrationFiles(dir)
		want, _ := fs.Glob(migrations, dir+"/*.sql")
		slices.Sort(want)
		if err != nil || len(got) < 10 || !slices.Equal(got, want) {
			t.Errorf("migrationFiles(%q) = %q, %v; want %q", dir, got, err, want)
		}
	}
}

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
		if p := strings.Join(plan, "\n"); !strings.Contains(p, "USING COVERING INDEX messages_unread_by_age") || strings.Contains(p, "TEMP B-TREE") {
			t.Errorf("stale (by recipient: %v) reads more than its index, or sorts:\n%s", byRecipient, p)
		}
	}
}

// Every form of inbox list reads an index in id order: no scan of the
// table, no sort of the whole history (so ListEach streams).
func TestListUsesIndexes(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "t.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, tc := range []struct {
		to    string
		all   bool
		index string
	}{
		{"", false, "messages_unread_by_team"},
		{"", true, "messages_by_team"},
		{"w", false, "messages_unread_by_recipient"},
		{"w", true, "messages_by_recipient"},
	} {
		args := []any{"t"}
		if tc.to != "" {
			args = append(args, tc.to)
		}
		p := queryPlan(t, db, listQuery(tc.to, tc.all), append(args, 0, 500)...)
		if !strings.Contains(p, "USING INDEX "+tc.index) || strings.Contains(p, "TEMP B-TREE") {
			t.Errorf("list (to %q, all %v) does not stream from %s:\n%s", tc.to, tc.all, tc.index, p)
		}
	}
	_, where, args := unreadWhere("t", "w", 7)
	if p := queryPlan(t, db, `SELECT id FROM messages WHERE `+where+` ORDER BY id`, args...); !strings.Contains(p, "messages_unread_replies") {
		t.Errorf("replies are not served by messages_unread_replies:\n%s", p)
	}
}

func queryPlan(t *testing.T, db *DB, q string, args ...any) string {
	t.Helper()
	rows, err := db.db.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	return strings.Join(plan, "\n")
}

// Completing a team, or a drain's name, lists the mail's teams or a team's
// recipients by seeks in an index, one per name: no scan of the messages
// or of a team's whole index, however much mail it holds.
func TestLooseScans(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "t.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p := queryPlan(t, db, looseScan("recipient", "team = ?"), "t", "t", 50)
	if strings.Contains(p, "SCAN messages") || strings.Count(p, "USING COVERING INDEX messages_by_recipient") != 2 ||
		!strings.Contains(p, "(team=? AND recipient>?)") {
		t.Errorf("recipients are not found by seeks in messages_by_recipient:\n%s", p)
	}
	p = queryPlan(t, db, looseScan("team", ""), 50)
	if strings.Contains(p, "SCAN messages") || !strings.Contains(p, "(team>?)") {
		t.Errorf("teams are not found by seeks in an index:\n%s", p)
	}
}
