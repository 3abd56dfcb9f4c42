package envoy

import (
	"fmt"
	"math"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/nodeset"
)

// Host is one upstream host.
type Host struct {
	// Key is what Envoy hashes for the host: its hash_key metadata, its
	// hostname (use_hostname_for_hashing) or its address "ip:port". Empty
	// means Addr.
	Key string
	// Addr is the host's address, "10.0.0.1:80".
	Addr string
	// Weight is the load_balancing_weight; 0 means 1.
	Weight uint32
}

func (h Host) key() string {
	if h.Key == "" {
		return h.Addr
	}
	return h.Key
}

func (h Host) weight() uint32 { return max(h.Weight, 1) }

// normalise validates hosts and returns their node list and normalised
// weights, with the smallest and largest.
func normalise(hosts []Host) (nodeset.List, []float64, float64, float64, error) {
	nodes := make([]kolco.Node, len(hosts))
	var sum uint64
	for i, h := range hosts {
		nodes[i] = kolco.Node{ID: h.key(), Addr: h.Addr, Weight: float64(h.weight())}
		sum += uint64(h.weight())
	}
	list, err := nodeset.NewList(nodes, nil)
	if err != nil {
		return list, nil, 0, 0, fmt.Errorf("envoy: %w", err)
	}
	if sum > math.MaxUint32 {
		return list, nil, 0, 0, fmt.Errorf("envoy: %w: weights sum to %d, above 2^32-1", kolco.ErrBadWeight, sum)
	}
	w := make([]float64, len(hosts))
	lo, hi := math.Inf(1), 0.0
	for i, h := range hosts {
		w[i] = float64(h.weight()) * 1.0 / float64(sum)
		lo, hi = min(lo, w[i]), max(hi, w[i])
	}
	return list, w, lo, hi, nil
}
