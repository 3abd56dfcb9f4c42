package ring

import (
	"fmt"

	"github.com/kolco-dev/kolco"
)

// OwnersSorted sets out[i] to the position in [Ring.Nodes] of the owner of
// a key whose hash is hashes[i]. The hashes must be sorted ascending and out
// must be as long as hashes. It is for bulk measurements: one merge of the
// keys with the points, O(len(hashes) + Points()), instead of a search per
// key. The positions index Nodes as it is when the call runs, so call both
// while no change runs concurrently. The error is kolco.ErrNoNodes for an
// empty ring and wraps kolco.ErrBadConfig for unsorted hashes or a short out.
func (r *Ring) OwnersSorted(hashes []uint64, out []int32) error {
	s := r.m.Load()
	if len(s.points) == 0 {
		return kolco.ErrNoNodes
	}
	if len(out) < len(hashes) {
		return fmt.Errorf("%w: out holds %d of %d owners", kolco.ErrBadConfig, len(out), len(hashes))
	}
	p := 0
	for i, h := range hashes {
		if i > 0 && h < hashes[i-1] {
			return fmt.Errorf("%w: hashes not sorted at %d", kolco.ErrBadConfig, i)
		}
		for p < len(s.points) && s.points[p] < h {
			p++
		}
		if p == len(s.points) {
			out[i] = int32(s.owners.at(0))
		} else {
			out[i] = int32(s.owners.at(p))
		}
	}
	return nil
}
