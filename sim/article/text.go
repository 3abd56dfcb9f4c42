package article

import (
	"fmt"
	"io"
	"strings"
)

// pct formats x as Python's "{:.Nf%}" does: multiplied by 100 in floating
// point, then rounded to n decimals.
func pct(x float64, n int) string { return fmt.Sprintf("%.*f%%", n, x*100) }

// WriteText prints the article's tables in its own layout and rounding.
func (a *Figures) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "hash %% N, %d keys user:0..:\n", a.Keys["modulo"])
	for _, r := range a.Modulo {
		fmt.Fprintf(&b, "%3d -> %-3d moved %s\n", r.Old, r.New, pct(r.Moved, 2))
	}

	fmt.Fprintf(&b, "\nthree nodes, 100 vnodes:\n")
	fmt.Fprintf(&b, "%s -> %s\n%s x2 -> [%s]\nwithout %s: %s -> %s\n",
		a.Demo.Key, a.Demo.Owner, a.Demo.Key, strings.Join(a.Demo.Replicas, ", "), a.Demo.Owner, a.Demo.Key, a.Demo.After)

	fmt.Fprintf(&b, "\none ring, %d keys, 10 -> 11 nodes:\n", a.Keys["one_ring"])
	fmt.Fprintf(&b, "vnodes  moved   to_new  donors  max   min   spread\n")
	for _, r := range a.OneRing {
		fmt.Fprintf(&b, "%6d  %s  %s  %6d  %.2f  %.2f  %s\n",
			r.VNodes, pct(r.Moved, 2), pct(r.ToNew, 0), r.Donors, r.Max, r.Min, pct(r.Spread, 1))
	}

	fmt.Fprintf(&b, "\n30 node name sets, %d keys each, 10 -> 11 nodes:\n", a.Keys["name_sets"])
	fmt.Fprintf(&b, "vnodes  moved: min    avg     max   | max/avg  spread\n")
	for _, r := range a.NameSets {
		fmt.Fprintf(&b, "%6d  %10s  %s  %s | %.2f  %s\n",
			r.VNodes, pct(r.MinMoved, 2), pct(r.AvgMoved, 2), pct(r.MaxMoved, 2), r.MeanMax, pct(r.MeanSpread, 1))
	}

	fmt.Fprintf(&b, "\nfailure of the most loaded node, %d keys:\n", a.Keys["failures"])
	for _, r := range a.Failures {
		fmt.Fprintf(&b, "vnodes=%d: %s held %s of keys, receivers: %d; %s: %s -> %s\n",
			r.VNodes, r.Victim, pct(r.VictimShare, 1), r.Receivers, r.Worst, pct(r.WorstBefore, 1), pct(r.WorstAfter, 1))
	}

	fmt.Fprintf(&b, "\nweights, %d keys:\n", a.Keys["weights"])
	for _, r := range a.Weights {
		parts := make([]string, len(r.Nodes))
		for i := range r.Nodes {
			parts[i] = fmt.Sprintf("%s %s", r.Nodes[i], pct(r.Shares[i], 1))
		}
		fmt.Fprintf(&b, "vnodes=%d: %s\n", r.VNodes, strings.Join(parts, " / "))
	}

	fmt.Fprintf(&b, "\nrendezvous, %d keys, 10 -> 11 nodes: moved %s, to the new node %s\n",
		a.Keys["rendezvous"], pct(a.Rendezvous.Moved, 2), pct(a.Rendezvous.ToNew, 0))

	c, s := a.Cost.Cache, a.Cost.Storage
	fmt.Fprintf(&b, "\ncost of 10 -> 11 nodes:\n")
	fmt.Fprintf(&b, "cache, %.0f RPS, hit rate %s, database %.0f RPS in steady state:\n", c.RPS, pct(c.HitRate, 0), c.SteadyDB)
	fmt.Fprintf(&b, "  %% N:  %s of keys cold, database %.0f RPS, %.0fx steady\n", pct(c.ModuloCold, 0), c.ModuloDB, c.ModuloFactor)
	fmt.Fprintf(&b, "  ring: %s of keys cold, database %.0f RPS, %.1fx steady\n", pct(c.RingCold, 0), c.RingDB, c.RingFactor)
	fmt.Fprintf(&b, "storage, %.0f TB on 10 nodes:\n", s.Total/1e12)
	fmt.Fprintf(&b, "  %% N:  %.1f TB sent\n", s.ModuloMoved/1e12)
	fmt.Fprintf(&b, "  ring: %.0f GB sent, %.0f GB from each old node\n", s.RingMoved/1e9, s.RingPerNode/1e9)
	_, err := io.WriteString(w, b.String())
	return err
}
