package membership

import (
	"fmt"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat"
	"github.com/kolco-dev/kolco/compat/twemproxy"
)

// zonesKey is the part of a pool that kolco adds to say its servers'
// zones; the other keys are the proxy's business and are left alone here.
type zonesKey struct {
	Zones map[string]string `yaml:"zones"`
}

// ParseNutcracker returns the servers of one pool of a nutcracker.yml as
// nodes: ID the server's name, else its address as twemproxy hashes it
// (see twemproxy.Server.RingName); weight as configured; address to dial;
// zone from the pool's kolco "zones" key (by name, else by address). An
// empty pool means the file's only pool. The nodes come in file order.
// The file is read by compat.ReadNutcracker. The error wraps
// [ErrBadContent] (and twemproxy.ErrBadServer for a bad server line,
// [kolco.ErrDuplicateNode] for a name listed twice).
func ParseNutcracker(data []byte, pool string) ([]kolco.Node, error) {
	f, err := compat.ReadNutcracker(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadContent, err)
	}
	p, err := f.Pool(pool)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadContent, err)
	}
	var z zonesKey
	if err := p.Node.Decode(&z); err != nil {
		return nil, fmt.Errorf("%w: pool %q: %w", ErrBadContent, p.Name, err)
	}
	nodes, err := poolNodes(p.Servers, z.Zones)
	if err != nil {
		return nil, fmt.Errorf("%w: pool %q: %w", ErrBadContent, p.Name, err)
	}
	return nodes, nil
}

// poolNodes converts a pool's servers, refusing duplicate names or
// addresses, zones for no server, and an empty list.
func poolNodes(servers []twemproxy.Server, zones map[string]string) ([]kolco.Node, error) {
	if len(servers) == 0 {
		return nil, fmt.Errorf("servers: none given")
	}
	nodes := make([]kolco.Node, 0, len(servers))
	byName := map[string]int{}
	byAddr := map[string]int{}
	for i, s := range servers {
		n := kolco.Node{ID: s.RingName(), Weight: float64(max(s.Weight, 1)), Addr: s.Addr()}
		if j, dup := byName[n.ID]; dup {
			return nil, fmt.Errorf("servers: %d and %d: %w: %q", j+1, i+1, kolco.ErrDuplicateNode, n.ID)
		}
		if j, dup := byAddr[n.Addr]; dup {
			return nil, fmt.Errorf("servers: %d and %d have the same address %s", j+1, i+1, n.Addr)
		}
		byName[n.ID], byAddr[n.Addr] = i, i
		nodes = append(nodes, n)
	}
	for server, zone := range zones {
		i, ok := byName[server]
		if !ok {
			if i, ok = byAddr[server]; !ok {
				return nil, fmt.Errorf("zones: %q is not a server's name or address", server)
			}
		}
		if zone == "" {
			return nil, fmt.Errorf("zones: %q: empty zone", server)
		}
		if nodes[i].Zone != "" && nodes[i].Zone != zone {
			return nil, fmt.Errorf("zones: server %d is given two zones, %q and %q", i+1, nodes[i].Zone, zone)
		}
		nodes[i].Zone = zone
	}
	return nodes, nil
}
