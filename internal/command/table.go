package command

import (
	"bufio"
	"io"
	"text/tabwriter"
)

// Table is the aligned table the listing commands print. tabwriter writes
// every cell and every pad on its own, so a table of 200 rows straight to
// stdout was some 4,800 write calls; Table gathers them into one buffer.
type Table struct {
	*tabwriter.Writer
	out *bufio.Writer
}

// NewTable starts a table written to w when flushed.
func NewTable(w io.Writer) *Table {
	out := bufio.NewWriter(w)
	return &Table{Writer: tabwriter.NewWriter(out, 0, 4, 2, ' ', 0), out: out}
}

// Flush aligns the rows and writes the table to its writer.
func (t *Table) Flush() error {
	if err := t.Writer.Flush(); err != nil {
		return err
	}
	return t.out.Flush()
}
