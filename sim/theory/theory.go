// Package theory holds the closed forms that the simulator and the planner
// print beside their measurements: what a change of membership moves, how
// unevenly a ring's arcs spread, and how often random replica sets span
// every zone.
//
// The moved shares and the ring's arc spread come from Karger et al.,
// "Consistent Hashing and Random Trees" (STOC 1997): a change of k nodes
// moves k/(N+k) of the keys, and a ring of V points per node has arc spread
// sqrt((N-1)/(NV+1)).
package theory

import (
	"math"

	"github.com/kolco-dev/kolco"
)

// MovedAdd returns the share of keys a minimally disruptive placement
// moves when k nodes join n equal ones: k/(n+k), the new nodes' fair share.
func MovedAdd(n, k int) float64 { return float64(k) / float64(n+k) }

// MovedRemove returns the share of keys a minimally disruptive placement
// moves when k of n equal nodes leave: k/n, their keys.
func MovedRemove(n, k int) float64 { return float64(k) / float64(n) }

// ModuloMoved returns the share of uniformly hashed keys that hash % n
// moves when n becomes m: 1 - min(n,m)/lcm(n,m), since h % n = h % m
// exactly for the residues below min(n, m) of each period lcm(n, m).
// For m = n+1 it is n/(n+1). It returns NaN for n or m below 1.
func ModuloMoved(n, m int) float64 {
	if n <= 0 || m <= 0 {
		return math.NaN()
	}
	l := n / gcd(n, m) * m
	return 1 - float64(min(n, m))/float64(l)
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// Moved returns the expected moved share of a change from n to m equal
// nodes for the algorithm of package algo named name: modulo's lcm
// formula, or the minimal share for the consistent algorithms.
func Moved(name string, n, m int) float64 {
	switch {
	case name == "modulo":
		return ModuloMoved(n, m)
	case m >= n:
		return MovedAdd(n, m-n)
	default:
		return MovedRemove(n, n-m)
	}
}

// MovedShares returns the least share of keys any placement must move to
// go from the weight shares of nodes before to those of nodes after: half
// the sum over all IDs of |share after - share before|, a node absent from
// one side having share 0 there. It is 1/(N+1) for one node joining N
// equal ones. The IDs of each side must be distinct, as a placement's are;
// the sum runs in the order of the nodes given, so the result is the same
// to the last bit on every run.
func MovedShares(before, after []kolco.Node) float64 {
	b, a := shares(before), shares(after)
	tv := 0.0
	for _, n := range before {
		tv += math.Abs(a[n.ID] - b[n.ID])
	}
	for _, n := range after {
		if _, ok := b[n.ID]; !ok {
			tv += a[n.ID]
		}
	}
	return tv / 2
}

// shares returns each node's weight over the total weight, by ID.
func shares(nodes []kolco.Node) map[string]float64 {
	total := 0.0
	for _, n := range nodes {
		total += n.EffectiveWeight()
	}
	m := make(map[string]float64, len(nodes))
	for _, n := range nodes {
		m[n.ID] = n.EffectiveWeight() / total
	}
	return m
}
