package cassandra

import (
	"fmt"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/bytestr"
	"github.com/kolco-dev/kolco/internal/continuum"
	"github.com/kolco-dev/kolco/internal/nodeset"
)

// Endpoint is one Cassandra node and the tokens it holds.
type Endpoint struct {
	// ID names the endpoint: its address or host ID. Empty means Addr.
	ID string
	// Addr is the endpoint's address.
	Addr string
	// Tokens are the endpoint's tokens (num_tokens of them).
	Tokens []int64
}

// Ring is a Cassandra token ring. It is immutable and safe for concurrent
// use; lookups do not allocate.
type Ring struct {
	list nodeset.List
	ring continuum.Continuum[uint64] // the tokens as points; owners index endpoints
}

var _ kolco.Placement = (*Ring)(nil)

// point maps a signed token to an unsigned continuum point in the same
// order: flipping the sign bit moves Long.MIN_VALUE to 0.
func point(t int64) uint64 { return uint64(t) ^ 1<<63 }

// New returns the ring of these endpoints. The error wraps
// [kolco.ErrNoNodes] when there is no token, [kolco.ErrDuplicateNode] for an
// endpoint named twice, [kolco.ErrBadNodeID] for an endpoint without ID and
// address, and [kolco.ErrBadConfig] for a token held twice.
func New(endpoints []Endpoint) (*Ring, error) {
	nodes := make([]kolco.Node, len(endpoints))
	placed := make([]bool, len(endpoints))
	var b continuum.Builder[uint64]
	for i, e := range endpoints {
		id := e.ID
		if id == "" {
			id = e.Addr
		}
		nodes[i] = kolco.Node{ID: id, Addr: e.Addr, Weight: float64(max(len(e.Tokens), 1))}
		placed[i] = len(e.Tokens) > 0
		for _, t := range e.Tokens {
			b.Add(point(t), i)
		}
	}
	list, err := nodeset.NewList(nodes, placed)
	if err != nil {
		return nil, fmt.Errorf("cassandra: %w", err)
	}
	r := &Ring{list: list, ring: b.Build(continuum.KeepAll)}
	if p, twice := r.ring.Repeated(); twice {
		return nil, fmt.Errorf("%w: cassandra: token %d held twice", kolco.ErrBadConfig, int64(p^1<<63))
	}
	return r, nil
}

// Index returns the position, in the list given to [New], of the primary
// replica of a serialized partition key.
func (r *Ring) Index(key []byte) int { return r.IndexToken(Token(key)) }

// IndexToken returns the position of the endpoint that owns token t: the
// first token >= t, wrapping.
func (r *Ring) IndexToken(t int64) int { return r.ring.Locate(point(t)) }

// Locate returns the primary replica of a serialized partition key. The
// error is always nil.
func (r *Ring) Locate(key string) (*kolco.Node, error) {
	return r.list.At(r.Index(bytestr.Of(key))), nil
}

// LocateN appends up to n distinct endpoints in ring order from the key's
// token: SimpleStrategy's replicas. The error wraps [kolco.ErrBadCount]
// when n < 1.
func (r *Ring) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	start := r.ring.Search(point(Token(bytestr.Of(key))))
	return r.list.AppendN(dst, n, r.ring.Len(), func(step int) int { return r.ring.Walk(start, step) })
}

// Nodes returns the endpoints that hold tokens, sorted by ID.
func (r *Ring) Nodes() []kolco.Node { return r.list.Nodes() }
