package command

import (
	"bytes"
	"strings"
	"testing"
	"text/tabwriter"
)

// Table aligns as the tabwriter the listing commands used (tab width 4,
// padding 2) did, wide characters and empty cells included, in one write.
func TestTableAlignsAsTabwriter(t *testing.T) {
	rows := [][]string{
		{"ID", "TO", "FROM", "AGE", "FIRST LINE"},
		{"1", "w1", "lead", "3m", "hello"},
		{"1024", "wörker-ünïcode", "", "2d04h", "lünch ☕ at noon"},
		{"77", "w", "a-much-longer-sender", "45s", ""},
	}
	var want bytes.Buffer
	tw := tabwriter.NewWriter(&want, 0, 4, 2, ' ', 0)
	for _, r := range rows {
		tw.Write([]byte(strings.Join(r, "\t") + "\n"))
	}
	tw.Flush()
	var got countingWriter
	tb := NewTable(&got, rows[0]...)
	for _, r := range rows[1:] {
		tb.Row(r...)
	}
	if err := tb.Flush(); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Fatalf("table:\n%s\nwant (tabwriter):\n%s", got.String(), want.String())
	}
	if got.writes != 1 {
		t.Fatalf("%d writes, want the table in one", got.writes)
	}
}

type countingWriter struct {
	bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}
