package plan

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/kolco-dev/kolco/sim/report"
)

// Tables renders the change by the trace's traffic in format f: the
// rates and the database's load, the misses the change adds over time,
// each node's requests, its hot keys, and the pool's miss-ratio curve.
func (t *TrafficImpact) Tables(f report.Format) []report.Table {
	sum := report.Table{Title: fmt.Sprintf("traffic: %s over %s, %s req/s, %s reads/s",
		report.Count(int(t.Requests), "request", "requests"), span(f, t.Seconds), f.Num(t.RPS, 0), f.Num(t.ReadRPS, 0)),
		Columns: []string{"measure", "per second", "share"}}
	sum.Add("requests to moved keys", f.Num(t.MovedRPS, 1), f.Pct(t.MovedRPS/t.RPS, 2))
	sum.Add("reads of moved keys that miss right after", f.Num(t.MovedReadRPS, 1), f.Pct(ratio(t.MovedReadRPS, t.ReadRPS), 2))
	sum.Add("database reads, steady before (miss ratio from the "+t.MissFrom+")", f.Num(t.DBRPS, 1), f.Pct(t.MissRatio, 2))
	sum.Add("database reads, right after", f.Num(t.DBRPSRightAfter, 1), f.Pct(ratio(t.DBRPSRightAfter, t.ReadRPS), 2))
	sum.Add("database reads, steady after", f.Num(t.DBRPSAfter, 1), f.Pct(t.MissRatioAfter, 2))
	if t.Lost > 0 {
		sum.Add("requests the capture dropped", strconv.FormatInt(t.Lost, 10), "")
	}
	win := report.Table{Title: "database misses the change adds, from its start", Columns: []string{"within", "misses", "per second"}}
	for _, m := range t.Misses {
		win.Add(span(f, m.Seconds), f.Num(m.Misses, 0), f.Num(m.RPS, 1))
	}
	nodes := report.Table{Title: "per node: requests and reads per second before -> after", Columns: []string{"node", "req/s before", "req/s after", "reads/s before", "reads/s after"}}
	hot := report.Table{Title: "hot keys after the change", Columns: []string{"node", "key", "req/s", "share of the node"}}
	withMem := t.Curve != nil
	if withMem {
		nodes.Columns = append(nodes.Columns, "memory", "miss ratio before", "miss ratio after")
	}
	for _, n := range t.Nodes {
		row := []string{n.Node, f.Num(n.RPSBefore, 1), f.Num(n.RPSAfter, 1), f.Num(n.ReadRPSBefore, 1), f.Num(n.ReadRPSAfter, 1)}
		if withMem {
			row = append(row, f.Bytes(n.Memory), missCell(f, n.MissBefore), missCell(f, n.MissAfter))
		}
		nodes.Add(row...)
		for _, h := range n.Hot {
			hot.Add(n.Node, hotKey(f, h.Key), f.Num(h.RPS, 1), f.Pct(h.Share, 2))
		}
	}
	out := []report.Table{sum, win, nodes, hot}
	if c := t.Curve; c != nil {
		curve := report.Table{Title: "pool miss ratio against each node's memory (" + c.Policy + " eviction)", Columns: []string{"memory x", "mean memory", "before", "after"}}
		for i, x := range c.Factors {
			curve.Add(f.Plain(x), f.Bytes(c.Memory[i]), f.Pct(c.Before[i], 2), f.Pct(c.After[i], 2))
		}
		out = append(out, curve)
	}
	return out
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

// missCell writes a node's miss ratio, "-" when there is none.
func missCell(f report.Format, m *jsonFloat) string {
	if m == nil {
		return f.Pct(math.NaN(), 2)
	}
	return f.Pct(float64(*m), 2)
}

// hotKey writes a key for people quoted where it holds spaces or bytes
// that are not printable, and shortened past 60 bytes; as it is for CSV.
func hotKey(f report.Format, k string) string {
	if f == report.Raw {
		return k
	}
	q := strconv.Quote(k)
	if q[1:len(q)-1] == k && !strings.ContainsAny(k, " \t") && k != "" {
		q = k
	}
	if len(q) > 60 {
		q = q[:57] + "..."
	}
	return q
}

// span writes a duration in seconds: as the largest round unit for
// people, plain seconds for programs.
func span(f report.Format, s float64) string {
	if f == report.Raw {
		return f.Plain(s)
	}
	for _, u := range []struct {
		name string
		secs float64
	}{{"d", 86400}, {"h", 3600}, {"min", 60}, {"s", 1}, {"ms", 1e-3}} {
		if s >= u.secs {
			return strconv.FormatFloat(math.Round(s/u.secs*100)/100, 'f', -1, 64) + " " + u.name
		}
	}
	return f.Plain(s) + " s"
}
