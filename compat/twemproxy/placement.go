package twemproxy

import (
	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/bytestr"
)

// Locate returns the node of the server nutcracker sends key to. The error
// is [kolco.ErrNoNodes] for the zero Pool.
func (p *Pool) Locate(key string) (*kolco.Node, error) {
	return p.list.Node(p.Index(bytestr.Of(key)))
}

// LocateN appends up to n distinct nodes to dst: the owner of key first,
// then the servers met walking on from it (clockwise on the ketama ring; in
// nutcracker's server order for modula), then any server without points.
// nutcracker itself has no replicas: only the first node is its choice. The
// error wraps [kolco.ErrBadCount] when n < 1 and is [kolco.ErrNoNodes] for
// the zero Pool.
func (p *Pool) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	k := bytestr.Of(key)
	if p.modula {
		return p.list.AppendOrder(dst, n, p.byName, p.Index(k))
	}
	start := 0 // one server owns every point; the zero Pool has no hash
	if len(p.servers) > 1 {
		start = p.ring.Search(p.hashOf(k))
	}
	return p.list.AppendN(dst, n, p.ring.Len(), func(step int) int { return p.ring.Walk(start, step) })
}

// hashOf returns the hash Index computes for key on a pool of two or more
// servers.
func (p *Pool) hashOf(key []byte) uint32 {
	if p.hasTag {
		key = Tagged(key, p.tag)
	}
	if len(key) == 0 {
		return 0
	}
	return p.hash(key)
}

// Nodes returns the servers as nodes sorted by ID.
func (p *Pool) Nodes() []kolco.Node { return p.list.Nodes() }
