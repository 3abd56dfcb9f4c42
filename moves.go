package kolco

import "iter"

// A Move is a key whose owner differs between two placements: the data a
// store holds of it must go from From to To when the placement changes.
type Move struct {
	Key      string
	From, To *Node // the owners before and after, each placement's own node
}

// Moves returns the keys of keys whose owner differs between before and
// after, with their owners in each, in the order keys yields them. Owners
// are compared by ID: a node whose address alone changed keeps its keys.
// It is what a program that shards a store over a placement moves when
// the placement changes, and the keys it leaves in place are every other
// key of keys.
//
// The iteration stops at the first error of either placement's Locate
// ([ErrNoNodes] when one has no nodes), yielding it with a zero Move.
func Moves(before, after Placement, keys iter.Seq[string]) iter.Seq2[Move, error] {
	return func(yield func(Move, error) bool) {
		for k := range keys {
			from, err := before.Locate(k)
			if err != nil {
				yield(Move{}, err)
				return
			}
			to, err := after.Locate(k)
			if err != nil {
				yield(Move{}, err)
				return
			}
			if from.ID != to.ID && !yield(Move{Key: k, From: from, To: to}, nil) {
				return
			}
		}
	}
}
