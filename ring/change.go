package ring

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/bytestr"
	"github.com/kolco-dev/kolco/internal/nodeset"
)

// Apply makes the change c, all of it or, on error, none. A node's points
// are labelled by index, so a re-weighted node keeps its first min(old,
// new) points: raising a weight moves keys only onto the node and lowering
// it moves only keys off it. The error wraps kolco.ErrUnknownNode,
// kolco.ErrDuplicateNode, kolco.ErrBadNodeID, kolco.ErrBadWeight, or
// kolco.ErrBadConfig when the ring would hold too many points.
func (r *Ring) Apply(c kolco.Change) error { return r.m.Apply(c) }

// Add adds nodes to the ring in one change. The error wraps
// kolco.ErrBadNodeID, kolco.ErrBadWeight, kolco.ErrDuplicateNode or
// kolco.ErrBadConfig; on error the ring is unchanged.
func (r *Ring) Add(nodes ...kolco.Node) error { return r.m.Add(nodes...) }

// Remove removes the nodes with the given IDs in one change. The error
// wraps kolco.ErrUnknownNode for an ID that is not in the ring, or that is
// listed twice (the second removal would find nothing), as for every
// kolco.Mutable; on error the ring is unchanged.
func (r *Ring) Remove(ids ...string) error { return r.m.Remove(ids...) }

// Reweight sets the weight of node id, moving keys only onto it or only off
// it (see [Ring.Apply]). The error wraps kolco.ErrUnknownNode,
// kolco.ErrBadWeight, or kolco.ErrBadConfig when the node would get more
// points than a ring holds; on error the ring is unchanged.
func (r *Ring) Reweight(id string, weight float64) error { return r.m.Reweight(id, weight) }

// pair is a point during a change, before it is split into the parallel
// points and owners arrays.
type pair struct {
	h     uint64
	owner uint32
}

func comparePairs(a, b pair) int {
	if c := cmp.Compare(a.h, b.h); c != 0 {
		return c
	}
	return cmp.Compare(a.owner, b.owner)
}

// next returns the snapshot after d. The points of removed and re-weighted
// nodes are dropped and those of new and re-weighted nodes hashed. Owner
// indexes follow ID order, so ordering equal points by owner index orders
// them by ID; the old points keep their relative order and the sorted new
// ones are merged in (see merge.go), never re-sorted.
func (r *Ring) next(old *Snapshot, d nodeset.Delta) (*Snapshot, error) {
	drop := make(map[string]bool, len(d.Removed)+len(d.Reweighted))
	for _, n := range d.Removed {
		drop[n.ID] = true
	}
	for _, n := range d.Reweighted {
		drop[n.ID] = true
	}
	s := &Snapshot{cfg: &r.cfg, set: d.New, nodes: d.New.View()}
	remap, add, addAt := renumber(old.nodes, s.nodes, drop)
	counts := make([]int, len(add))
	total := 0
	for i, n := range add {
		c, err := pointCount(r.cfg.VNodes, n)
		if err != nil {
			return nil, err
		}
		counts[i], total = c, total+c
	}
	if len(old.points)+total > maxPoints {
		return nil, fmt.Errorf("%w: the ring would exceed %d points", kolco.ErrBadConfig, maxPoints)
	}
	fresh := r.hashPoints(add, counts, addAt, total)
	switch {
	case len(s.nodes)-len(add) == len(old.nodes):
		s.updateTable(old, remap, s.insertPoints(old, remap, fresh), nil)
	case len(fresh) == 0:
		s.updateTable(old, remap, nil, s.mergePoints(old, remap, fresh))
	default:
		s.mergePoints(old, remap, fresh)
		s.buildTable()
	}
	s.indexZones()
	return s, nil
}

// renumber walks the old and new nodes (both sorted by ID) together. It
// returns remap, the new index of each old node whose points stay
// (droppedOwner for the others: removed, or in drop), and the nodes whose
// points must be hashed, with their new indexes.
func renumber(old, nodes []kolco.Node, drop map[string]bool) (remap []uint32, add []kolco.Node, addAt []uint32) {
	remap = make([]uint32, len(old))
	i := 0
	for j, n := range nodes {
		for ; i < len(old) && old[i].ID < n.ID; i++ {
			remap[i] = droppedOwner
		}
		if i < len(old) && old[i].ID == n.ID {
			remap[i], i = droppedOwner, i+1
			if !drop[n.ID] {
				remap[i-1] = uint32(j)
				continue
			}
		}
		add, addAt = append(add, n), append(addAt, uint32(j))
	}
	for ; i < len(old); i++ {
		remap[i] = droppedOwner
	}
	return remap, add, addAt
}

// parallelPoints is the number of new points above which hashing is spread
// over all cores; below it the goroutines cost more than they save.
const parallelPoints = 1 << 15

// hashPoints returns the sorted points of the new nodes, add[i] getting
// counts[i] points owned by index at[i].
func (r *Ring) hashPoints(add []kolco.Node, counts []int, at []uint32, total int) []pair {
	out := make([]pair, total)
	offsets := make([]int, len(add))
	for i, off := 0, 0; i < len(add); i++ {
		offsets[i], off = off, off+counts[i]
	}
	fill := func(i int, buf []byte) []byte {
		dst := out[offsets[i] : offsets[i]+counts[i]]
		for p := range dst {
			buf = r.cfg.Label(buf[:0], add[i].ID, p)
			dst[p] = pair{r.keys.fn(bytestr.String(buf)), at[i]}
		}
		return buf
	}
	workers := min(runtime.GOMAXPROCS(0), len(add))
	if total < parallelPoints || workers < 2 {
		var buf []byte
		for i := range add {
			buf = fill(i, buf)
		}
	} else {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				var buf []byte
				for i := w; i < len(add); i += workers {
					buf = fill(i, buf)
				}
			})
		}
		wg.Wait()
	}
	slices.SortFunc(out, comparePairs)
	return out
}

// indexZones numbers the distinct zones in node order.
func (s *Snapshot) indexZones() {
	s.zoneOf = make([]uint32, len(s.nodes))
	seen := make(map[string]uint32)
	for i, n := range s.nodes {
		z, ok := seen[n.Zone]
		if !ok {
			z = uint32(len(seen))
			seen[n.Zone] = z
		}
		s.zoneOf[i] = z
	}
	s.zones = len(seen)
}
