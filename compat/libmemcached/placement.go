package libmemcached

import (
	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/bytestr"
)

// Locate returns the node of the server libmemcached sends key to. The
// error is [kolco.ErrNoNodes] for the zero Pool.
func (p *Pool) Locate(key string) (*kolco.Node, error) {
	return p.list.Node(p.Index(bytestr.Of(key)))
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
		return p.list.AppendOrder(dst, n, p.order, p.Index(k))
	}
	start := p.ring.Search(p.Hash(k))
	return p.list.AppendN(dst, n, p.ring.Len(), func(step int) int { return p.ring.Walk(start, step) })
}

// Nodes returns the servers as nodes sorted by ID.
func (p *Pool) Nodes() []kolco.Node { return p.list.Nodes() }
