package ring

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/bytestr"
)

// Add adds nodes to the ring in one change. The error wraps
// kolco.ErrBadNodeID, kolco.ErrBadWeight, kolco.ErrDuplicateNode or
// kolco.ErrBadConfig; on error the ring is unchanged.
func (r *Ring) Add(nodes ...kolco.Node) error {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	old := r.snap.Load()
	if err := kolco.CheckNew(old.has, nodes); err != nil {
		return err
	}
	return r.apply(old, nil, nodes)
}

// Remove removes the nodes with the given IDs in one change. The error
// wraps kolco.ErrUnknownNode for an ID that is not in the ring, or that is
// listed twice (the second removal would find nothing), as for every
// kolco.Membership; on error the ring is unchanged.
func (r *Ring) Remove(ids ...string) error {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	old := r.snap.Load()
	drop := make(map[string]bool, len(ids))
	for _, id := range ids {
		if !old.has(id) {
			return fmt.Errorf("%w: %q", kolco.ErrUnknownNode, id)
		}
		if drop[id] {
			return fmt.Errorf("%w: %q listed twice", kolco.ErrUnknownNode, id)
		}
		drop[id] = true
	}
	return r.apply(old, drop, nil)
}

// Reweight sets the weight of node id. Points are labelled by index, so the
// first min(old, new) points stay where they are: raising a weight moves keys
// only onto the node and lowering it moves only keys off it. The error wraps
// kolco.ErrUnknownNode, kolco.ErrBadWeight, or kolco.ErrBadConfig when the
// node would get more points than a ring holds; on error the ring is unchanged.
func (r *Ring) Reweight(id string, weight float64) error {
	if err := kolco.CheckWeight(weight); err != nil {
		return fmt.Errorf("node %q: %w", id, err)
	}
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	old := r.snap.Load()
	i, ok := old.find(id)
	if !ok {
		return fmt.Errorf("%w: %q", kolco.ErrUnknownNode, id)
	}
	n := old.nodes[i]
	n.Weight = weight
	return r.apply(old, map[string]bool{id: true}, []kolco.Node{n})
}

func (s *snapshot) find(id string) (int, bool) {
	return slices.BinarySearchFunc(s.nodes, id, func(n kolco.Node, id string) int { return cmp.Compare(n.ID, id) })
}

func (s *snapshot) has(id string) bool {
	_, ok := s.find(id)
	return ok
}

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

// apply publishes a snapshot without the nodes in drop and with add.
// Owner indexes follow ID order, so ordering equal points by owner index
// orders them by ID; the old points keep their relative order and the
// sorted new ones are merged in (see merge.go), never re-sorted.
func (r *Ring) apply(old *snapshot, drop map[string]bool, add []kolco.Node) error {
	add = slices.SortedFunc(slices.Values(add), func(a, b kolco.Node) int { return cmp.Compare(a.ID, b.ID) })
	counts := make([]int, len(add))
	total := 0
	for i, n := range add {
		c, err := r.pointCount(n)
		if err != nil {
			return err
		}
		counts[i], total = c, total+c
	}
	if len(old.points)+total > maxPoints {
		return fmt.Errorf("%w: the ring would exceed %d points", kolco.ErrBadConfig, maxPoints)
	}

	// Merge the node lists, recording where each old and new node lands.
	s := &snapshot{nodes: make([]kolco.Node, 0, len(old.nodes)+len(add))}
	remap := make([]uint32, len(old.nodes))
	addAt := make([]uint32, len(add))
	dropped := 0
	for i, j := 0, 0; i < len(old.nodes) || j < len(add); {
		if j == len(add) || (i < len(old.nodes) && old.nodes[i].ID < add[j].ID) {
			if drop[old.nodes[i].ID] {
				remap[i] = droppedOwner
				dropped++
			} else {
				remap[i] = uint32(len(s.nodes))
				s.nodes = append(s.nodes, old.nodes[i])
			}
			i++
			continue
		}
		addAt[j] = uint32(len(s.nodes))
		s.nodes = append(s.nodes, add[j])
		j++
	}

	fresh := r.hashPoints(add, counts, addAt, total)
	if dropped == 0 {
		s.insertPoints(old, remap, fresh)
	} else {
		s.mergePoints(old, remap, fresh)
	}
	s.indexZones()
	s.buildIndex()
	r.snap.Store(s)
	return nil
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
			dst[p] = pair{r.cfg.Hash(bytestr.String(buf)), at[i]}
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
func (s *snapshot) indexZones() {
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
