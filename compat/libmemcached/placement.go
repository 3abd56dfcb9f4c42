package libmemcached

import (
	"fmt"
	"slices"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/bytestr"
	"github.com/kolco-dev/kolco/internal/nodeset"
)

// Locate returns the node of the server libmemcached sends key to. The
// error is [kolco.ErrNoNodes] for the zero Pool.
func (p *Pool) Locate(key string) (kolco.Node, error) {
	i := p.Index(bytestr.Of(key))
	if i < 0 {
		return kolco.Node{}, kolco.ErrNoNodes
	}
	return p.nodes[i], nil
}

// LocateN appends up to n distinct nodes to dst: the owner of key first,
// then the servers met walking on from it (clockwise on the ketama
// continuum; in libmemcached's server order for modula), then any server
// without points. libmemcached itself has no replicas: only the first node
// is its choice. The error wraps [kolco.ErrBadCount] when n < 1 and is
// [kolco.ErrNoNodes] for the zero Pool.
func (p *Pool) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	if len(p.servers) == 0 {
		return dst, kolco.ErrNoNodes
	}
	if n < 1 {
		return dst, fmt.Errorf("%w (got %d)", kolco.ErrBadCount, n)
	}
	want := min(n, len(p.servers))
	start := len(dst)
	first := p.Index(bytestr.Of(key))
	dst = append(dst, p.nodes[first])
	switch {
	case len(dst)-start == want:
	case p.modula:
		j := slices.Index(p.order, int32(first))
		for k := 1; k < len(p.order) && len(dst)-start < want; k++ {
			dst = nodeset.AppendNew(dst, start, p.nodes[p.order[(j+k)%len(p.order)]])
		}
	default:
		j := p.search(p.Hash(bytestr.Of(key)))
		for k := 1; k < len(p.points) && len(dst)-start < want; k++ {
			dst = nodeset.AppendNew(dst, start, p.nodes[p.owner[(j+k)%len(p.points)]])
		}
	}
	return nodeset.AppendRest(dst, start, want, p.nodes), nil
}

// Nodes returns the servers as nodes sorted by ID.
func (p *Pool) Nodes() []kolco.Node { return slices.Clone(p.byID) }
