package command

import (
	"bytes"
	"io"
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
	tb := newTable(&got, rows[0]...)
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

// A second Flush writes only the rows added since, aligned among
// themselves, and nothing at all when there are none; a row's slice may be
// reused by its caller.
func TestTableFlushAgain(t *testing.T) {
	var got countingWriter
	tb := newTable(&got, "NAME", "STATE")
	row := []string{"a-long-name", "running"}
	tb.Row(row...)
	row[0] = "changed"
	if err := tb.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := tb.Flush(); err != nil {
		t.Fatal(err)
	}
	tb.Row("b", "ready")
	if err := tb.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "NAME         STATE\na-long-name  running\nb  ready\n"
	if got.String() != want || got.writes != 2 {
		t.Fatalf("%d writes of %q, want 2 of %q", got.writes, got.String(), want)
	}
}

// A tab in a cell is a space: the row stays in line.
func TestTableTabInCell(t *testing.T) {
	var got countingWriter
	tb := newTable(&got, "ID", "FIRST LINE", "TO")
	tb.Row("1", "a\tb", "w1")
	tb.Row("22", "tail\t", "w2\tx")
	if err := tb.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "ID  FIRST LINE  TO\n1   a b         w1\n22  tail        w2 x\n"
	if got.String() != want {
		t.Fatalf("table:\n%q\nwant:\n%q", got.String(), want)
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

// A cell of wide characters (a question in Chinese in spawn list's ASK
// column) is padded by the columns it takes on a terminal, two a
// character, so the columns after it stay in line.
func TestTableWideCharacters(t *testing.T) {
	var got bytes.Buffer
	tb := newTable(&got, "ASK", "TOKENS")
	tb.Row("1 蓝色还是绿色", "0")
	tb.Row("2 blue or green", "0")
	if err := tb.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "ASK              TOKENS\n" +
		"1 蓝色还是绿色   0\n" +
		"2 blue or green  0\n"
	if got.String() != want {
		t.Fatalf("table:\n%s\nwant:\n%s", got.String(), want)
	}
}

// newTable is a Table whose cells are shown as given, for the tests that
// compare its layout with text/tabwriter's byte for byte.
func newTable(w io.Writer, header ...string) *Table {
	t := &Table{w: w, show: func(s string) string { return s }}
	t.Row(header...)
	return t
}
