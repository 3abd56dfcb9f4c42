package pymemcache

import (
	"fmt"
	"slices"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/bytestr"
)

// Locate returns the node RendezvousHash picks for the str key. The error
// is [kolco.ErrNoNodes] for the zero Pool.
func (p *Pool) Locate(key string) (kolco.Node, error) {
	i := p.Index(bytestr.Of(key))
	if i < 0 {
		return kolco.Node{}, kolco.ErrNoNodes
	}
	return p.nodes[i], nil
}

// LocateN appends up to n distinct nodes to dst in falling score order,
// equal scores by falling node name: the first is the node Locate returns,
// the next ones where HashClient would go if the nodes before were removed.
// The error wraps [kolco.ErrBadCount] when n < 1 and is [kolco.ErrNoNodes]
// for the zero Pool.
func (p *Pool) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	if len(p.names) == 0 {
		return dst, kolco.ErrNoNodes
	}
	if n < 1 {
		return dst, fmt.Errorf("%w (got %d)", kolco.ErrBadCount, n)
	}
	k := bytestr.Of(key)
	start := len(dst)
	// Each pass picks the best node below the previous pick in the order
	// (score, name), so no bookkeeping beyond the last pick is needed.
	var lastScore uint32
	lastName := ""
	for len(dst)-start < min(n, len(p.names)) {
		win, high := -1, uint32(0)
		for i, name := range p.names {
			s := score(name, k, false)
			if len(dst) > start && (s > lastScore || (s == lastScore && name >= lastName)) {
				continue
			}
			if win < 0 || s > high || (s == high && name > p.names[win]) {
				win, high = i, s
			}
		}
		dst = append(dst, p.nodes[win])
		lastScore, lastName = high, p.names[win]
	}
	return dst, nil
}

// Nodes returns the nodes sorted by ID.
func (p *Pool) Nodes() []kolco.Node { return slices.Clone(p.byID) }
