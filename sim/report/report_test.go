package report_test

import (
	"encoding/csv"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/sim/report"
)

func TestFormatCells(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		name       string
		human, raw string
		format     func(report.Format) string
	}{
		{"share", "12.35%", "0.12345", func(f report.Format) string { return f.Pct(0.12345, 2) }},
		{"share NaN", "-", "", func(f report.Format) string { return f.Pct(nan, 2) }},
		{"number", "2.72", "2.71828", func(f report.Format) string { return f.Num(2.71828, 2) }},
		{"number NaN", "-", "", func(f report.Format) string { return f.Num(nan, 1) }},
		{"bytes", "272.7 GB", "2.727e+11", func(f report.Format) string { return f.Bytes(2.727e11) }},
		{"small bytes", "999 B", "999", func(f report.Format) string { return f.Bytes(999) }},
		{"unit", "x", "", func(f report.Format) string { return f.Unit("x") }},
		{"plain", "0.1", "0.1", func(f report.Format) string { return f.Plain(0.1) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.format(report.Human); got != c.human {
				t.Errorf("human: %q, want %q", got, c.human)
			}
			if got := c.format(report.Raw); got != c.raw {
				t.Errorf("raw: %q, want %q", got, c.raw)
			}
		})
	}
}

func TestBytesUnits(t *testing.T) {
	for in, want := range map[float64]string{0: "0 B", 1000: "1.0 kB", 3e12: "3.0 TB", 4.5e15: "4.5 PB", 7e18: "7000.0 PB", -2e6: "-2.0 MB"} {
		t.Run(want, func(t *testing.T) {
			if got := report.Bytes(in); got != want {
				t.Errorf("Bytes(%v) = %q, want %q", in, got, want)
			}
		})
	}
}

// TestWriteCSVNamesEachRowsTable: every record starts with its table's
// title, the header with "table", and the cells follow unchanged.
func TestWriteCSVNamesEachRowsTable(t *testing.T) {
	tables := []report.Table{
		{Title: "first, with a comma", Columns: []string{"a", "b"}, Rows: [][]string{{"1", "x\"y"}}},
		{Title: "second", Columns: []string{"c"}, Rows: [][]string{{"2"}, {"3"}}},
	}
	var b strings.Builder
	if err := report.WriteCSV(&b, tables); err != nil {
		t.Fatal(err)
	}
	r := csv.NewReader(strings.NewReader(b.String()))
	r.FieldsPerRecord = -1
	got, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"table", "a", "b"}, {"first, with a comma", "1", "x\"y"}, {"table", "c"}, {"second", "2"}, {"second", "3"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("records %q, want %q", got, want)
	}
}

func ExampleWriteText() {
	t := report.Table{Title: "keys moved, 10 -> 11 nodes", Columns: []string{"setup", "moved", "bytes"}}
	for _, f := range []report.Format{report.Human, report.Raw} {
		t.Add("ring", f.Pct(1.0/11, 2), f.Bytes(3e12/11))
	}
	report.WriteText(os.Stdout, []report.Table{t})
	// Output:
	// keys moved, 10 -> 11 nodes:
	//   setup                moved                   bytes
	//    ring                9.09%                272.7 GB
	//    ring  0.09090909090909091  2.7272727272727274e+11
}

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 nodes", 1: "1 node", 2: "2 nodes", 11: "11 nodes"} {
		if got := report.Count(n, "node", "nodes"); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}
