// Package memento keeps the replacement table of MementoHash (Coluzzi,
// Lupica, Nunziata, Tamburri, Paolucci, "MementoHash: A Stateful, Minimal
// Memory, Best Performing Consistent Hash Algorithm", IEEE/ACM Transactions
// on Networking, 2024; arXiv:2306.09783) on top of a bucket function such as
// jump hash, and turns it into a [kolco.Placement] with arbitrary removals.
//
// Jump-style bucket functions map a key to one of the buckets 0..n-1 and
// only support growing or shrinking n at the end. MementoHash remembers each
// removed bucket b together with its replacer r, the number of working
// buckets left after the removal, and the previously removed bucket. A
// lookup that lands on a removed bucket re-hashes the key into [0, r) and
// follows replacers until it reaches a working bucket, so only the keys of
// the removed bucket move. The last bucket, while none is removed, goes by
// shrinking the array instead, as with the bucket function alone. An add
// restores the most recently removed bucket (or appends a new one when none
// is removed), so that undoing a change - a remove followed by an add, or
// an add followed by the removal of the node it added - gives every key
// back.
package memento

import (
	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/nodeset"
)

// state is an immutable placement state; changes copy it.
type state struct {
	ids     []string     // node ID per bucket; "" for a removed bucket
	idx     []int32      // index in nodes per bucket; -1 for a removed bucket
	rep     []int32      // replacer+1 per bucket; 0 for a working bucket
	prev    []int32      // previously removed bucket, for removed buckets
	last    int32        // most recently removed bucket; len(ids) if none
	working int          // number of working buckets
	set     nodeset.Set  // the members, sorted by ID
	nodes   []kolco.Node // set.View()
}

func (s *state) clone() *state {
	c := *s
	c.ids = append([]string(nil), s.ids...)
	c.rep = append([]int32(nil), s.rep...)
	c.prev = append([]int32(nil), s.prev...)
	c.idx = nil // see reindex
	return &c
}

// reindex points every working bucket at its node in set, whose values
// (address, zone) a change may have updated.
func (s *state) reindex(set nodeset.Set) {
	s.set, s.nodes = set, set.View()
	s.idx = make([]int32, len(s.ids))
	for b, id := range s.ids {
		s.idx[b] = -1
		if s.rep[b] == 0 {
			i, _ := set.Index(id)
			s.idx[b] = int32(i)
		}
	}
}

// add places node id on the most recently removed bucket, or on a new
// bucket at the end when none is removed. s must be a private copy.
func (s *state) add(id string) {
	b := s.last
	if int(b) == len(s.ids) {
		s.ids = append(s.ids, id)
		s.rep = append(s.rep, 0)
		s.prev = append(s.prev, 0)
		s.last = b + 1
	} else {
		s.ids[b] = id
		s.rep[b] = 0
		s.last = s.prev[b]
	}
	s.working++
}

// remove takes the bucket of id out of work. The last bucket of the array,
// with none removed, goes by shrinking the array, as in the paper: the keys
// it held go where the bucket function sends them over one bucket fewer,
// which is where they were before that bucket was added, so that removing
// the node just added restores the placement exactly. Any other bucket is
// recorded as removed, its replacer being the number of working buckets
// left. LocateN treats the owners it has chosen as removed by the same two
// rules (see locate), so that replica i+1 stays the owner once replicas
// 1..i are removed in order. s must be a private copy.
func (s *state) remove(id string) {
	// A linear scan: writers are rare, and a map from ID to bucket would
	// have to be copied on every change.
	b := int32(0)
	for i := range s.ids {
		if s.rep[i] == 0 && s.ids[i] == id {
			b = int32(i)
			break
		}
	}
	s.working--
	if s.shrinks(int(b)) {
		s.ids, s.rep, s.prev = s.ids[:b], s.rep[:b], s.prev[:b]
		s.last = b
		return
	}
	s.rep[b] = int32(s.working) + 1
	s.prev[b] = s.last
	s.last = b
	s.ids[b] = ""
}

// shrinks reports whether removing bucket b shrinks the array: b is the
// last bucket and none is removed.
func (s *state) shrinks(b int) bool { return b == len(s.ids)-1 && int(s.last) == len(s.ids) }
