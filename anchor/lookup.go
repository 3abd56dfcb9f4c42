package anchor

import (
	"math/bits"

	imix "github.com/kolco-dev/kolco/internal/mix"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/nodeset"
)

// reduce maps x to [0, n) by multiply-shift (Lemire), cheaper than a
// division and as uniform for a well-mixed x.
func reduce(x uint64, n uint32) uint32 {
	hi, _ := bits.Mul64(x, uint64(n))
	return uint32(hi)
}

// mix derives an independent 64-bit hash from h for the index i (a bucket,
// or a replica number shifted above every bucket): the SplitMix64 finalizer
// applied to h and i times the golden ratio.
func mix(h, i uint64) uint64 {
	return imix.SplitMix64(h ^ (i+1)*imix.Golden)
}

// getBucket is GETBUCKET(k) of the paper's Algorithm 3 for a key hash h.
// The caller ensures that at least one bucket works.
func (s *state) getBucket(h uint64) uint32 {
	b := reduce(h, uint32(len(s.a)))
	for s.a[b] > 0 { // b is removed: rehash into W_b
		x := reduce(mix(h, uint64(b)), s.a[b])
		for s.a[x] >= s.a[b] { // x was removed after b: find W_b[x]
			x = s.k[x]
		}
		b = x
	}
	return b
}

// Locate returns the node that owns key. The error is kolco.ErrNoNodes
// when the placement has no nodes.
func (h *Placement) Locate(key string) (*kolco.Node, error) {
	if n, _ := h.find(key); n != nil {
		return n, nil
	}
	return nil, kolco.ErrNoNodes
}

// LocateID returns the ID of the node Locate returns. The error is
// kolco.ErrNoNodes when the placement has no nodes.
func (h *Placement) LocateID(key string) (string, error) {
	if n, _ := h.find(key); n != nil {
		return n.ID, nil
	}
	return "", kolco.ErrNoNodes
}

// LocateIndex returns the position in Nodes of the node Locate returns.
// The error is kolco.ErrNoNodes, with -1, when the placement has no nodes.
func (h *Placement) LocateIndex(key string) (int, error) {
	if _, i := h.find(key); i >= 0 {
		return i, nil
	}
	return -1, kolco.ErrNoNodes
}

// find returns the owner of key in the current state and its index in
// the state's node set, or nil and -1 without nodes.
func (h *Placement) find(key string) (*kolco.Node, int) {
	s := h.m.Load()
	if s.n == 0 {
		return nil, -1
	}
	i := int(s.byBucket[s.getBucket(h.hash(key))])
	return &s.nodes[i], i
}

// LocateN appends up to n distinct owners of key to dst. Replica i is the
// anchor lookup of the key hash re-mixed with i (replica 0 being Locate),
// skipping owners already listed; after 16n+64 tries any still missing
// nodes follow in ID order. Each replica thus keeps AnchorHash's minimal
// disruption. The error is [kolco.ErrBadCount] when n < 1 and
// [kolco.ErrNoNodes] when the anchor has no nodes.
func (h *Placement) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	if n < 1 {
		return dst, kolco.ErrBadCount
	}
	s := h.m.Load()
	if s.n == 0 {
		return dst, kolco.ErrNoNodes
	}
	n = min(n, len(s.nodes))
	start := len(dst)
	kh := h.hash(key)
	for i := 0; i < 16*n+64 && len(dst)-start < n; i++ {
		x := kh
		if i > 0 {
			x = mix(kh, uint64(i)<<32)
		}
		dst = nodeset.AppendNew(dst, start, s.nodes[s.byBucket[s.getBucket(x)]])
	}
	return nodeset.AppendRest(dst, start, n, s.nodes), nil
}
