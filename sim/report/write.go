package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText writes tables for people: each under its title, with columns
// aligned to the right, a blank line between tables.
func WriteText(w io.Writer, tables []Table) error {
	var b strings.Builder
	for i, t := range tables {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(t.Title + ":\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, strings.Join(t.Columns, "\t")+"\t")
		for _, r := range t.Rows {
			fmt.Fprintln(tw, strings.Join(r, "\t")+"\t")
		}
		tw.Flush()
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteCSV writes every table's header and rows as CSV, each line
// starting with the table's title (the header's with "table"), so that
// several tables share one file.
func WriteCSV(w io.Writer, tables []Table) error {
	cw := csv.NewWriter(w)
	for _, t := range tables {
		cw.Write(append([]string{"table"}, t.Columns...))
		for _, r := range t.Rows {
			cw.Write(append([]string{t.Title}, r...))
		}
	}
	cw.Flush()
	return cw.Error()
}
