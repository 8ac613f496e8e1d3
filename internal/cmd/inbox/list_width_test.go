package inbox

import (
	"strings"
	"testing"
	"time"

	"github.com/teamkit/teamkit/pkg/mailbox"
)

// inbox list pads its cells by the columns they take on a terminal: a
// sender stored in Chinese (any text can be, by whoever writes the mailbox)
// does not push the columns after it out of line.
func TestListTableWideCharacters(t *testing.T) {
	var b strings.Builder
	tb := &listTable{w: &b, show: func(s string) string { return s }}
	at := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	for _, m := range []mailbox.Message{{ID: 1, From: "领导", To: "w1", Body: "hi", CreatedAt: at}, {ID: 2, From: "lead", To: "w1", Body: "ho", CreatedAt: at}} {
		if err := tb.add(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := tb.flush(); err != nil {
		t.Fatal(err)
	}
	want := "ID  FROM  TO  CREATED               READ  FIRST LINE\n" +
		"1   领导  w1  2026-12-05T10:00:00Z  -     hi\n" +
		"2   lead  w1  2026-12-05T10:00:00Z  -     ho\n"
	if b.String() != want {
		t.Fatalf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}
