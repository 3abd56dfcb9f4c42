package goredisring

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/bytestr"
	"github.com/kolco-dev/kolco/internal/nodeset"
	"github.com/kolco-dev/kolco/slots"
)

// Ring is the placement of a go-redis Ring. It is immutable and safe for
// concurrent use; lookups do not allocate.
type Ring struct {
	list nodeset.List
	seed []uint64 // seed[i] = XXH64 of shard i's name, shards in name order
}

var _ kolco.Placement = (*Ring)(nil)

// New returns the placement of a Ring whose RingOptions.Addrs is addrs
// (shard name to "host:port"). The error wraps [kolco.ErrNoNodes] for no
// shards and [kolco.ErrBadNodeID] for an empty name.
func New(addrs map[string]string) (*Ring, error) {
	names := make([]string, 0, len(addrs))
	for name := range addrs {
		names = append(names, name)
	}
	slices.SortFunc(names, strings.Compare)
	nodes := make([]kolco.Node, len(names))
	r := &Ring{seed: make([]uint64, len(names))}
	for i, name := range names {
		nodes[i] = kolco.Node{ID: name, Addr: addrs[name], Weight: 1}
		r.seed[i] = xxhash.Sum64String(name)
	}
	list, err := nodeset.NewList(nodes, nil)
	if err != nil {
		return nil, fmt.Errorf("goredis: %w", err)
	}
	r.list = list
	return r, nil
}

func mix64(x uint64) uint64 {
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	return x * 2685821657736338717
}

// keyHash returns XXH64 of key's hash tag.
func keyHash(key string) uint64 { return xxhash.Sum64String(slots.HashTag(key)) }

// Index returns the position, in name order, of the shard the Ring sends
// key to.
func (r *Ring) Index(key []byte) int { return r.best(keyHash(bytestr.String(key))) }

func (r *Ring) best(kh uint64) int {
	best, top := 0, mix64(kh^r.seed[0])
	for i := 1; i < len(r.seed); i++ {
		if s := mix64(kh ^ r.seed[i]); s > top {
			best, top = i, s
		}
	}
	return best
}

// Locate returns the shard the Ring sends key to. The error is always nil.
func (r *Ring) Locate(key string) (*kolco.Node, error) {
	return r.list.At(r.best(keyHash(key))), nil
}

// LocateN appends up to n distinct shards in descending score. The error
// wraps [kolco.ErrBadCount] when n < 1.
func (r *Ring) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	kh := keyHash(key)
	var below uint64 // score of the previous pick; 0 before the first
	return r.list.AppendN(dst, n, len(r.seed), func(step int) int {
		pick, top := -1, uint64(0)
		for i, seed := range r.seed {
			s := mix64(kh ^ seed)
			if (step == 0 || s < below) && (pick < 0 || s > top) {
				pick, top = i, s
			}
		}
		below = top
		return pick
	})
}

// Nodes returns the shards sorted by name.
func (r *Ring) Nodes() []kolco.Node { return r.list.Nodes() }
