package plan

import (
	"fmt"
	"strconv"

	"github.com/kolco-dev/kolco/sim/report"
)

// maxFlowRows bounds the flows a table lists; JSON carries them all.
const maxFlowRows = 30

// Tables renders the plan as tables in format f.
func (r *Result) Tables(f report.Format) []report.Table {
	title := fmt.Sprintf("plan: %s, %d -> %s, %s", r.Label, r.Before, report.Count(r.After, "node", "nodes"), report.Count(r.Keys, "key", "keys"))
	if r.Step > 0 {
		title = fmt.Sprintf("plan: %s, step %d: %d -> %s, %s", r.Label, r.Step, r.Before, report.Count(r.After, "node", "nodes"), report.Count(r.Keys, "key", "keys"))
	}
	sum := report.Table{Title: title, Columns: []string{"measure", "measured", "theory"}}
	if f == report.Raw {
		sum.Add("keys moved", strconv.Itoa(r.Moved), f.Plain(r.TheoryShare*float64(r.Keys)))
		sum.Add("share of keys moved", f.Plain(r.MovedShare), f.Plain(r.TheoryShare))
	} else {
		sum.Add("keys moved", fmt.Sprintf("%d (%s)", r.Moved, f.Pct(r.MovedShare, 2)), f.Pct(r.TheoryShare, 2))
	}
	sum.Add("bytes moved", f.Bytes(r.MovedBytes), f.Bytes(r.TheoryShare*r.TotalBytes))
	sum.Add("bytes sent per old node", f.Bytes(r.MovedBytes/float64(max(r.Before, 1))), f.Bytes(r.TheoryShare*r.TotalBytes/float64(max(r.Before, 1))))
	sum.Add("requests to moved keys", f.Pct(r.MovedRequests, 2), f.Pct(r.TheoryShare, 2))
	if r.MoveSeconds > 0 {
		sum.Add("seconds to move (a store's mover)", f.Num(r.MoveSeconds, 1)+f.Unit(" s"), "")
	}
	if k := r.Cache; k != nil {
		sum.Add("database RPS, steady", f.Num(k.SteadyDB, 0), f.Num(k.SteadyDB, 0))
		sum.Add("database RPS, right after", f.Num(k.DB, 0), f.Num(k.TheoryDB, 0))
		sum.Add("factor over steady", f.Num(k.Factor, 1)+f.Unit("x"), f.Num(k.TheoryFac, 1)+f.Unit("x"))
		if w := k.Warm; w != nil {
			sum.Add("warm: requests read from the previous owner", f.Pct(w.Fallback, 2), "")
			sum.Add("warm: database RPS, right after", f.Num(w.DB, 0), f.Num(w.TheoryDB, 0))
			sum.Add("warm: factor over steady", f.Num(w.Factor, 1)+f.Unit("x"), f.Num(w.TheoryFac, 1)+f.Unit("x"))
		}
	}
	switch {
	case r.Step > 0 && f == report.Raw:
		sum.Add("keys returning to a former owner", strconv.Itoa(r.Returned), "")
	case r.Step > 0:
		sum.Add("keys returning to a former owner", fmt.Sprintf("%d (%s)", r.Returned, f.Pct(float64(r.Returned)/float64(r.Keys), 2)), "")
	}
	flows := report.Table{Title: "moves: donor -> receiver, largest first", Columns: []string{"from", "to", "keys", "bytes", "requests"}}
	for i, x := range r.Flows {
		if i == maxFlowRows && f != report.Raw {
			flows.Add(fmt.Sprintf("(%d more)", len(r.Flows)-i), "", "", "", "")
			break
		}
		flows.Add(x.From, x.To, strconv.Itoa(x.Keys), f.Bytes(x.Bytes), f.Pct(x.Requests, 2))
	}
	loads := report.Table{Title: "per node: keys, bytes and request share before -> after; bytes sent and received",
		Columns: []string{"node", "keys before", "keys after", "bytes before", "bytes after", "req before", "req after", "sends", "receives"}}
	for _, x := range r.Loads {
		loads.Add(x.Node, strconv.Itoa(x.KeysBefore), strconv.Itoa(x.KeysAfter), f.Bytes(x.BytesBefore), f.Bytes(x.BytesAfter),
			f.Pct(x.ShareBefore, 2), f.Pct(x.ShareAfter, 2), f.Bytes(x.Sends), f.Bytes(x.Receives))
	}
	out := []report.Table{sum, flows, loads}
	if r.Traffic != nil {
		out = append(out, r.Traffic.Tables(f)...)
	}
	return out
}

// Tables renders every step's tables in format f, after a summary of the
// steps.
func (h *History) Tables(f report.Format) []report.Table {
	sum := report.Table{Title: fmt.Sprintf("history: %d changes", len(h.Steps)),
		Columns: []string{"step", "nodes", "keys moved", "returning to a former owner", "bytes moved"}}
	var out []report.Table
	for _, r := range h.Steps {
		sum.Add(strconv.Itoa(r.Step), fmt.Sprintf("%d -> %d", r.Before, r.After), strconv.Itoa(r.Moved),
			strconv.Itoa(r.Returned), f.Bytes(r.MovedBytes))
		out = append(out, r.Tables(f)...)
	}
	return append([]report.Table{sum}, out...)
}
