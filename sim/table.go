package sim

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/sim/stats"
)

// Table is one rendered table of an experiment's results, for people
// (aligned text) and for programs that want rows (CSV). JSON output carries
// the typed results instead.
type Table struct {
	// Title is a one-line caption.
	Title string `json:"title"`
	// Columns are the column headers.
	Columns []string `json:"columns"`
	// Rows hold one formatted cell per column.
	Rows [][]string `json:"rows"`
}

// add appends a row of formatted cells.
func (t *Table) add(cells ...string) { t.Rows = append(t.Rows, cells) }

// Pct formats a share as a percentage with d decimals.
func Pct(x float64, d int) string {
	if math.IsNaN(x) {
		return "-"
	}
	return strconv.FormatFloat(x*100, 'f', d, 64) + "%"
}

// cells formats table cells for people, or as plain numbers when raw.
type cells struct{ raw bool }

func (c cells) plain(x float64) string {
	if math.IsNaN(x) {
		return ""
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

func (c cells) pct(x float64, d int) string {
	if c.raw {
		return c.plain(x)
	}
	return Pct(x, d)
}

func (c cells) num(x float64, d int) string {
	if c.raw {
		return c.plain(x)
	}
	return f(x, d)
}

func (c cells) bytes(x float64) string {
	if c.raw {
		return c.plain(x)
	}
	return Bytes(x)
}

// unit returns u for people and nothing for programs.
func (c cells) unit(u string) string {
	if c.raw {
		return ""
	}
	return u
}

// f formats x with d decimals, "-" for NaN.
func f(x float64, d int) string {
	if math.IsNaN(x) {
		return "-"
	}
	return strconv.FormatFloat(x, 'f', d, 64)
}

func itoa(i int) string { return strconv.Itoa(i) }

// Bytes formats a byte count with a decimal unit (kB, MB, GB, TB).
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

// nodeNames returns n nodes named prefix-0 ... prefix-(n-1).
func nodeNames(prefix string, n int) []kolco.Node {
	nodes := make([]kolco.Node, n)
	for i := range nodes {
		nodes[i] = kolco.Node{ID: prefix + "-" + strconv.Itoa(i)}
	}
	return nodes
}

// setPrefix is the node name prefix of name set s: "node" for the first,
// "set<s>-node" for the others, so that each set places the points of its
// nodes elsewhere.
func setPrefix(s int) string {
	if s == 0 {
		return "node"
	}
	return "set" + strconv.Itoa(s) + "-node"
}

// shareStats returns max/avg, min/avg and spread (population standard
// deviation over the mean) of per-node counts.
func shareStats(counts []int) (maxAvg, minAvg, spread float64) {
	if len(counts) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	total := 0
	for _, c := range counts {
		total += c
	}
	avg := float64(total) / float64(len(counts))
	return float64(slices.Max(counts)) / avg, float64(slices.Min(counts)) / avg, stats.PStdev(counts) / avg
}

// minAvgMax returns the minimum, mean and maximum of xs.
func minAvgMax(xs []float64) (lo, avg, hi float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	return slices.Min(xs), stats.Mean(xs), slices.Max(xs)
}

// step reports progress to p, if p is not nil.
func (p Progress) step(done, total int, name string) {
	if p != nil {
		p(done, total, name)
	}
}
