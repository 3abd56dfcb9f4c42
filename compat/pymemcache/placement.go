package pymemcache

import (
	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/bytestr"
)

// Locate returns the node RendezvousHash picks for the str key. The error
// is [kolco.ErrNoNodes] for the zero Pool.
func (p *Pool) Locate(key string) (*kolco.Node, error) {
	return p.list.Node(p.Index(bytestr.Of(key)))
}

// LocateN appends up to n distinct nodes to dst in falling score order,
// equal scores by falling node name: the first is the node Locate returns,
// the next ones where HashClient would go if the nodes before were removed.
// The error wraps [kolco.ErrBadCount] when n < 1 and is [kolco.ErrNoNodes]
// for the zero Pool.
func (p *Pool) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	k := bytestr.Of(key)
	// Each step picks the best node below the previous pick in the order
	// (score, name), so no bookkeeping beyond the last pick is needed.
	var lastScore uint32
	lastName := ""
	return p.list.AppendN(dst, n, len(p.names), func(step int) int {
		win, high := -1, uint32(0)
		for i, name := range p.names {
			s := score(name, k, false)
			if step > 0 && (s > lastScore || (s == lastScore && name >= lastName)) {
				continue
			}
			if win < 0 || s > high || (s == high && name > p.names[win]) {
				win, high = i, s
			}
		}
		lastScore, lastName = high, p.names[win]
		return win
	})
}

// Nodes returns the nodes sorted by ID.
func (p *Pool) Nodes() []kolco.Node { return p.list.Nodes() }
