package dns

import (
	"errors"
	"net"
	"testing"

	"github.com/kolco-dev/kolco/membership"
)

// FuzzSRVNodes checks that any SRV answer either names a valid node set
// or is refused with ErrBadContent, and never panics.
func FuzzSRVNodes(f *testing.F) {
	f.Add("mc-0.mc.default.svc.cluster.local.", uint16(11211), uint16(33), "mc-1.mc.", uint16(11211), uint16(33), false, false)
	f.Add("10-0-0-7.mc.", uint16(1), uint16(0), "10-0-0-7.mc.", uint16(2), uint16(0), true, true)
	f.Add(".", uint16(0), uint16(0), "", uint16(0), uint16(0), false, true)
	f.Add("MC-0.Mc.", uint16(5), uint16(1), "mc-0.mc", uint16(5), uint16(1), true, false)
	f.Fuzz(func(t *testing.T, t1 string, p1, w1 uint16, t2 string, p2, w2 uint16, weights, stable bool) {
		s := &Source{Name: "x.", UseWeights: weights, StableAddresses: stable}
		nodes, err := s.srvNodes([]*net.SRV{{Target: t1, Port: p1, Weight: w1}, {Target: t2, Port: p2, Weight: w2}})
		if err != nil {
			if !errors.Is(err, membership.ErrBadContent) {
				t.Fatalf("error %v does not wrap ErrBadContent", err)
			}
			return
		}
		membership.SortNodes(nodes)
		if err := (membership.Version{Nodes: nodes}).Validate(); err != nil {
			t.Fatalf("invalid node set %+v: %v", nodes, err)
		}
		for _, n := range nodes {
			if !stable && addressDerived(n.ID) {
				t.Fatalf("node %q named by an address", n.ID)
			}
		}
	})
}
