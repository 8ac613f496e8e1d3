//go:build !windows

package inbox_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/teamkit/teamkit/pkg/mailbox"
)

// inbox list on a mailbox damaged in the middle of its history prints the
// messages it read before the damage, each whole, then fails: never a row
// (or a JSON line) cut off where the output's buffer happened to end.
func TestListDamagedPrintsWholeRows(t *testing.T) {
	h := newHarness(t)
	db := h.store()
	ctx := context.Background()
	body := strings.Repeat("b", 300)
	for i := 0; i < 1500; i++ {
		if _, err := db.Send(ctx, mailbox.Message{Team: "crew", From: "lead", To: "w", Body: body}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// The last leaf page of the messages table: the newest messages, past
	// the first batches list reads.
	raw, err := sql.Open("sqlite", h.DB)
	if err != nil {
		t.Fatal(err)
	}
	var page, size int64
	if _, err := raw.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	if err := raw.QueryRow(`SELECT pageno FROM dbstat WHERE name = 'messages' AND pagetype = 'leaf' ORDER BY path DESC LIMIT 1`).Scan(&page); err != nil {
		t.Fatal(err)
	}
	if err := raw.QueryRow(`PRAGMA page_size`).Scan(&size); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	f, err := os.OpenFile(h.DB, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xff}, int(size)), (page-1)*size); err != nil {
		t.Fatal(err)
	}
	f.Close()

	row := regexp.MustCompile(`^(ID +FROM +TO +CREATED +READ +FIRST LINE|\d+ +lead +w +\S+ +- +b+…?)$`)
	for _, args := range [][]string{{"list", "crew", "--all"}, {"list", "crew", "--all", "--json"}} {
		r := h.run(args...)
		if r.Code != 1 || !strings.Contains(r.Stderr, "corrupt") {
			t.Fatalf("inbox %q on a damaged mailbox: exit %d, stderr %q; want 1 and corrupt", args, r.Code, r.Stderr)
		}
		if r.Stdout == "" || !strings.HasSuffix(r.Stdout, "\n") {
			t.Fatalf("inbox %q on a damaged mailbox: stdout ends %q; want whole lines", args, r.Stdout[max(0, len(r.Stdout)-80):])
		}
		for _, l := range strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n") {
			var m map[string]any
			if args[len(args)-1] == "--json" && json.Unmarshal([]byte(l), &m) != nil ||
				args[len(args)-1] != "--json" && !row.MatchString(l) {
				t.Fatalf("inbox %q on a damaged mailbox: line %q is not a whole row", args, l[:min(len(l), 200)])
			}
		}
	}
}
