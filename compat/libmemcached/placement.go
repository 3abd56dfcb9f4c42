package libmemcached

import (
	"slices"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/bytestr"
)

// Locate returns the node of the server libmemcached sends key to. The
// error is [kolco.ErrNoNodes] for the zero Pool.
func (p *Pool) Locate(key string) (kolco.Node, error) {
	i := p.Index(bytestr.Of(key))
	if i < 0 {
		return kolco.Node{}, kolco.ErrNoNodes
	}
	return p.list.At(i), nil
}

// LocateN appends up to n distinct nodes to dst: the owner of key first,
// then the servers met walking on from it (clockwise on the ketama
// continuum; in libmemcached's server order for modula), then any server
// without points. libmemcached itself has no replicas: only the first node
// is its choice. The error wraps [kolco.ErrBadCount] when n < 1 and is
// [kolco.ErrNoNodes] for the zero Pool.
func (p *Pool) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	k := bytestr.Of(key)
	if p.modula {
		j := slices.Index(p.order, int32(p.Index(k)))
		return p.list.AppendN(dst, n, len(p.order), func(step int) int { return int(p.order[(j+step)%len(p.order)]) })
	}
	start := p.ring.Search(p.Hash(k))
	return p.list.AppendN(dst, n, p.ring.Len(), func(step int) int { return p.ring.Walk(start, step) })
}

// Nodes returns the servers as nodes sorted by ID.
func (p *Pool) Nodes() []kolco.Node { return p.list.Nodes() }
