package cassandra

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/bytestr"
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
	list   nodeset.List
	tokens []int64 // ascending
	owner  []int32 // owner[i]: endpoint index of tokens[i]
}

var _ kolco.Placement = (*Ring)(nil)

// New returns the ring of these endpoints. The error wraps
// [kolco.ErrNoNodes] when there is no token, [kolco.ErrDuplicateNode] for an
// endpoint named twice, [kolco.ErrBadNodeID] for an endpoint without ID and
// address, and [kolco.ErrBadConfig] for a token held twice.
func New(endpoints []Endpoint) (*Ring, error) {
	nodes := make([]kolco.Node, len(endpoints))
	placed := make([]bool, len(endpoints))
	type tok struct {
		t     int64
		owner int32
	}
	var all []tok
	for i, e := range endpoints {
		id := e.ID
		if id == "" {
			id = e.Addr
		}
		nodes[i] = kolco.Node{ID: id, Addr: e.Addr, Weight: float64(max(len(e.Tokens), 1))}
		placed[i] = len(e.Tokens) > 0
		for _, t := range e.Tokens {
			all = append(all, tok{t, int32(i)})
		}
	}
	list, err := nodeset.NewList(nodes, placed)
	if err != nil {
		return nil, fmt.Errorf("cassandra: %w", err)
	}
	slices.SortFunc(all, func(a, b tok) int { return cmp.Compare(a.t, b.t) })
	r := &Ring{list: list, tokens: make([]int64, len(all)), owner: make([]int32, len(all))}
	for i, t := range all {
		if i > 0 && t.t == all[i-1].t {
			return nil, fmt.Errorf("%w: cassandra: token %d held twice", kolco.ErrBadConfig, t.t)
		}
		r.tokens[i], r.owner[i] = t.t, t.owner
	}
	return r, nil
}

// search returns the position of the first token >= t, wrapping to 0.
func (r *Ring) search(t int64) int {
	lo, hi := 0, len(r.tokens)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if r.tokens[m] < t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == len(r.tokens) {
		return 0
	}
	return lo
}

// Index returns the position, in the list given to [New], of the primary
// replica of a serialized partition key.
func (r *Ring) Index(key []byte) int { return r.IndexToken(Token(key)) }

// IndexToken returns the position of the endpoint that owns token t.
func (r *Ring) IndexToken(t int64) int { return int(r.owner[r.search(t)]) }

// Locate returns the primary replica of a serialized partition key. The
// error is always nil.
func (r *Ring) Locate(key string) (kolco.Node, error) {
	return r.list.At(r.Index(bytestr.Of(key))), nil
}

// LocateN appends up to n distinct endpoints in ring order from the key's
// token: SimpleStrategy's replicas. The error wraps [kolco.ErrBadCount]
// when n < 1.
func (r *Ring) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	start := r.search(Token(bytestr.Of(key)))
	nt := len(r.tokens)
	return r.list.AppendN(dst, n, nt, func(step int) int { return int(r.owner[(start+step)%nt]) })
}

// Nodes returns the endpoints that hold tokens, sorted by ID.
func (r *Ring) Nodes() []kolco.Node { return r.list.Nodes() }
