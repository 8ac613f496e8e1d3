package command

import (
	"io"
	"slices"
	"strings"

	"github.com/teamkit/teamkit/pkg/text"
)

// Table is the aligned table the listing commands print: every cell but a
// row's last is padded to its column's widest cell and two spaces, as
// text/tabwriter (tab width 4, padding 2) aligned them, and the whole table
// goes out in one write on Flush. The cells arrive whole, so nothing parses
// them back out of formatted lines as tabwriter did, byte by byte (a tenth
// of a stale listing ~300 messages); tabwriter also wrote every cell and pad
// on its own, some 4,800 write calls for 200 rows. Widths count runes. A
// cell is printed as given but for a tab, which becomes a space: a tab
// (in a message's first line, say) would take the cell past its counted
// width and push the rest of the row out of line, where tabwriter split the
// cell there; Env.Show keeps tabs as layout, on a terminal too. (It escapes
// the other control characters for a terminal; a pipe gets them as sent.)
type Table struct {
	w io.Writer
	// cells holds every row's cells one after another, ends where each
	// row's end: one slice for the table rather than one a row.
	cells []string
	ends  []int
	width []int
	show  func(string) string
}

// Table starts a table under header, written to w when flushed: every
// cell is shown as Show shows text, escaped on a terminal. Names too:
// teamkit checks the names it writes, but whoever can write the mailbox (an
// agent, another host of a shared one) can store any text as a team, agent
// or path.
func (e *Env) Table(w io.Writer, header ...string) *Table {
	t := &Table{w: w, show: e.Show}
	t.Row(header...)
	return t
}

// Grow makes room for n more rows of as many cells as the header's, for a
// caller that knows how many rows it will add.
func (t *Table) Grow(n int) {
	cols := 1
	if len(t.ends) > 0 {
		cols = t.ends[0]
	}
	t.cells = slices.Grow(t.cells, n*cols)
	t.ends = slices.Grow(t.ends, n)
}

// Row adds a row of cells (copied: the caller may reuse its slice).
func (t *Table) Row(cells ...string) {
	for i, c := range cells {
		c = Cell(t.show(c))
		t.cells = append(t.cells, c)
		if i == len(cells)-1 {
			break
		}
		if i == len(t.width) {
			t.width = append(t.width, 0)
		}
		t.width[i] = max(t.width[i], text.Width(c))
	}
	t.ends = append(t.ends, len(t.cells))
}

// Cell is s as a table's cell: a tab in it, which a pipe or file would
// take for a column break, is a space.
func Cell(s string) string {
	if strings.IndexByte(s, '\t') < 0 {
		return s
	}
	return strings.ReplaceAll(s, "\t", " ")
}

// Flush writes the rows added since the last Flush, aligned among
// themselves, to the table's writer.
func (t *Table) Flush() error {
	if len(t.ends) == 0 {
		return nil
	}
	n := 0 // at least the table's size: pads are counted in full
	for _, c := range t.cells {
		n += len(c) + 1
	}
	for _, w := range t.width {
		n += len(t.ends) * (w + 2)
	}
	b := make([]byte, 0, n)
	start := 0
	for _, end := range t.ends {
		row := t.cells[start:end]
		start = end
		for i, c := range row {
			b = append(b, c...)
			if i == len(row)-1 {
				break
			}
			pad := t.width[i] - text.Width(c) + 2
			for ; pad > len(spaces); pad -= len(spaces) {
				b = append(b, spaces...)
			}
			b = append(b, spaces[:pad]...)
		}
		b = append(b, '\n')
	}
	t.cells, t.ends, t.width = t.cells[:0], t.ends[:0], t.width[:0]
	_, err := t.w.Write(b)
	return err
}

// spaces are a cell's pad, appended in one piece rather than a byte at a time.
const spaces = "                                "
