package rendezvous

import (
	"fmt"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/bytestr"
	"github.com/kolco-dev/kolco/internal/mix"
	"github.com/kolco-dev/kolco/keyhash"
)

// bufSize is the stack buffer for ID + Separator + key in separator mode;
// longer strings are joined on the heap.
const bufSize = 512

// scorer computes node scores for one key.
type scorer struct {
	s    *snapshot
	hash keyhash.Func
	kh   uint64 // key hash (mixer mode)
	key  string
	buf  *[bufSize]byte // separator mode only
}

// scorer prepares sc for key. In separator mode the caller must set sc.buf
// to a buffer of its own stack frame: allocating it here would move it to
// the heap, and zeroing it in mixer mode would cost time for nothing.
func (r *Placement) scorer(sc *scorer, s *snapshot, key string) {
	sc.s, sc.hash, sc.key = s, r.sepHash, key
	if s.seeds != nil {
		sc.kh = r.hash(key)
	}
}

// score returns the score of node i; a higher score wins.
func (sc *scorer) score(i int) uint64 {
	var raw uint64
	if sc.s.seeds != nil {
		raw = mix.Fmix64(sc.kh ^ sc.s.seeds[i])
	} else {
		raw = sc.hash(bytestr.Join(sc.buf[:], sc.s.prefixes[i], sc.key))
	}
	if sc.s.weights == nil {
		return raw
	}
	return weighted(raw, sc.s.weights[i])
}

// Locate returns the node with the highest score for key; equal scores go
// to the lower node ID. The error is kolco.ErrNoNodes when the placement
// has no nodes.
func (r *Placement) Locate(key string) (*kolco.Node, error) {
	if n, _ := r.find(key); n != nil {
		return n, nil
	}
	return nil, kolco.ErrNoNodes
}

// LocateID returns the ID of the node Locate returns. The error is
// kolco.ErrNoNodes when the placement has no nodes.
func (r *Placement) LocateID(key string) (string, error) {
	if n, _ := r.find(key); n != nil {
		return n.ID, nil
	}
	return "", kolco.ErrNoNodes
}

// LocateIndex returns the position in [Placement.Nodes] of the node Locate
// returns. The error is kolco.ErrNoNodes, with -1, when the placement has
// no nodes.
func (r *Placement) LocateIndex(key string) (int, error) {
	if _, i := r.find(key); i >= 0 {
		return i, nil
	}
	return -1, kolco.ErrNoNodes
}

// find returns the owner of key in the current state and its index in
// the state's node set, or nil and -1 without nodes.
func (r *Placement) find(key string) (*kolco.Node, int) {
	s := r.m.Load()
	n := s.set.Len()
	if n == 0 {
		return nil, -1
	}
	if s.seeds != nil && s.weights == nil {
		i := int(s.fastest(r.hash(key)))
		return &s.set.View()[i], i
	}
	var sc scorer
	r.scorer(&sc, s, key)
	if s.seeds == nil {
		sc.buf = new([bufSize]byte)
	}
	best, bi := sc.score(0), 0
	for i := 1; i < n; i++ {
		// Strictly greater: on a tie the earlier, lower ID keeps the key.
		if v := sc.score(i); v > best {
			best, bi = v, i
		}
	}
	return &s.set.View()[bi], bi
}

// fastest is Locate's loop for the common case, mixer mode with equal
// weights, written out so that the per-node work is one xor, one mix and
// one compare.
func (s *snapshot) fastest(kh uint64) int {
	best, bi := mix.Fmix64(kh^s.seeds[0]), 0
	for i, seed := range s.seeds[1:] {
		if v := mix.Fmix64(kh ^ seed); v > best {
			best, bi = v, i+1
		}
	}
	return bi
}

// cand is a scored node.
type cand struct {
	score uint64
	idx   int
}

// before reports whether a ranks ahead of b: higher score, then lower ID.
func before(a, b cand) bool {
	return a.score > b.score || (a.score == b.score && a.idx < b.idx)
}

// batch is how many owners one selection pass finds; it bounds the stack
// array of candidates.
const batch = 16

// LocateN appends the n nodes with the highest scores for key to dst, in
// decreasing score order, or every node if n exceeds their number. The
// error is kolco.ErrBadCount when n < 1 and kolco.ErrNoNodes without nodes.
//
// It selects in passes of up to 16 owners over all nodes, so it costs
// O(N * ceil(n/16)) score computations and allocates nothing when dst has
// room for the result.
func (r *Placement) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	if n < 1 {
		return dst, fmt.Errorf("%w (got %d)", kolco.ErrBadCount, n)
	}
	s := r.m.Load()
	size := s.set.Len()
	if size == 0 {
		return dst, kolco.ErrNoNodes
	}
	n = min(n, size)
	var sc scorer
	r.scorer(&sc, s, key)
	if s.seeds == nil {
		sc.buf = new([bufSize]byte)
	}
	var top [batch]cand
	last := cand{idx: -1} // idx -1: no threshold yet
	for n > 0 {
		k := sc.pick(&top, min(n, batch), last)
		for _, c := range top[:k] {
			dst = append(dst, s.set.At(c.idx))
		}
		last = top[k-1]
		n -= k
	}
	return dst, nil
}

// pick fills top with the k best candidates ranking after last (all
// candidates when last.idx is -1), best first, and returns how many it found.
func (sc *scorer) pick(top *[batch]cand, k int, last cand) int {
	c := 0
	for i := range sc.s.set.Len() {
		x := cand{sc.score(i), i}
		if last.idx >= 0 && !before(last, x) {
			continue
		}
		if c == k && !before(x, top[c-1]) {
			continue
		}
		if c < k {
			c++
		}
		j := c - 1
		for ; j > 0 && before(x, top[j-1]); j-- {
			top[j] = top[j-1]
		}
		top[j] = x
	}
	return c
}
