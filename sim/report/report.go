// Package report renders measurements as tables: for people, aligned text
// with percentages, units and rounding; for programs, CSV with plain
// numbers. The experiments of package sim and the planner of package
// sim/plan build their tables here, and the kolco command writes them.
package report

import (
	"fmt"
	"math"
	"strconv"
)

// Table is one rendered table of results, for people (aligned text) and
// for programs that want rows (CSV). JSON output carries the typed results
// instead.
type Table struct {
	// Title is a one-line caption.
	Title string `json:"title"`
	// Columns are the column headers.
	Columns []string `json:"columns"`
	// Rows hold one formatted cell per column.
	Rows [][]string `json:"rows"`
}

// Add appends a row of formatted cells.
func (t *Table) Add(cells ...string) { t.Rows = append(t.Rows, cells) }

// Format says how a table's cells are written.
type Format int

// The two formats: one for people, one for programs.
const (
	// Human writes shares as percentages, bytes with a unit, and numbers
	// rounded to the decimals asked for; NaN is "-".
	Human Format = iota
	// Raw writes plain numbers a program can read: shares as fractions,
	// bytes as byte counts, every digit; NaN is empty.
	Raw
)

// Plain writes x with every digit it needs, or "" for NaN, whatever the
// format.
func (Format) Plain(x float64) string {
	if math.IsNaN(x) {
		return ""
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// Pct writes a share: as a percentage with d decimals, or plain.
func (f Format) Pct(x float64, d int) string {
	if f == Raw {
		return f.Plain(x)
	}
	return Pct(x, d)
}

// Num writes a number: with d decimals, or plain.
func (f Format) Num(x float64, d int) string {
	if f == Raw {
		return f.Plain(x)
	}
	if math.IsNaN(x) {
		return "-"
	}
	return strconv.FormatFloat(x, 'f', d, 64)
}

// Bytes writes a byte count: with a decimal unit ([Bytes]), or plain.
func (f Format) Bytes(x float64) string {
	if f == Raw {
		return f.Plain(x)
	}
	return Bytes(x)
}

// Unit returns u for people and nothing for programs, for a unit written
// after a number.
func (f Format) Unit(u string) string {
	if f == Raw {
		return ""
	}
	return u
}

// Pct formats a share as a percentage with d decimals, "-" for NaN.
func Pct(x float64, d int) string {
	if math.IsNaN(x) {
		return "-"
	}
	return strconv.FormatFloat(x*100, 'f', d, 64) + "%"
}

// Bytes formats a byte count with a decimal unit (kB, MB, GB, TB, PB).
func Bytes(b float64) string {
	units := []string{"B", "kB", "MB", "GB", "TB", "PB"}
	i := 0
	for math.Abs(b) >= 1000 && i < len(units)-1 {
		b /= 1000
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", b)
	}
	return fmt.Sprintf("%.1f %s", b, units[i])
}

// Count writes n with the noun that agrees with it: "1 node", "0 nodes",
// "2 nodes", so that a table's title never says "1 nodes".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
