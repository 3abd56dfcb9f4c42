package ring

import (
	"fmt"
	"reflect"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/nodeset"
)

// AppendIdentity appends the ring's identity for kolco.Fingerprint (see
// [Snapshot.AppendIdentity]). The error wraps kolco.ErrBadConfig for a hash
// that keyhash does not name or a label other than [DefaultLabel].
func (r *Ring) AppendIdentity(dst []byte) ([]byte, error) { return r.Snapshot().AppendIdentity(dst) }

// AppendIdentity appends the identity of this state of the ring for
// kolco.Fingerprint: the hash by name and each node's ID and number of
// points, which together fix every point; with [Config.ZoneAware] and
// more than one zone, also which nodes share a zone. Weights that round to
// the same number of points, and zone names that group the nodes alike,
// give the same identity. The error wraps kolco.ErrBadConfig for a hash
// that keyhash does not name or a label other than [DefaultLabel].
func (s *Snapshot) AppendIdentity(dst []byte) ([]byte, error) {
	return nodeset.Identity(dst, "ring", s.nodes, func(w *nodeset.Writer) error {
		if reflect.ValueOf(s.cfg.Label).Pointer() != reflect.ValueOf(DefaultLabel).Pointer() {
			return fmt.Errorf("ring: %w: a point label other than DefaultLabel has no name", kolco.ErrBadConfig)
		}
		if err := w.HashName("ring", s.cfg.Hash); err != nil {
			return err
		}
		zones := s.cfg.ZoneAware && s.zones > 1
		if zones {
			w.Uint(1)
		} else {
			w.Uint(0)
		}
		for i, n := range s.nodes {
			c, _ := pointCount(s.cfg.VNodes, n) // within bounds: the node is on the ring
			w.String(n.ID)
			w.Uint(uint64(c))
			if zones {
				w.Uint(uint64(s.zoneOf[i]))
			}
		}
		return nil
	})
}
