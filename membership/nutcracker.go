package membership

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat/twemproxy"
)

// globalKey is nutcracker.yml's top-level key of kolco's proxy-wide
// settings; every other top-level key names a pool.
const globalKey = "kolco"

// nutcrackerPool is the part of a pool that says who its servers are;
// the other keys are the proxy's business and are left alone here.
type nutcrackerPool struct {
	Servers []string          `yaml:"servers"`
	Zones   map[string]string `yaml:"zones"`
}

// ParseNutcracker returns the servers of one pool of a nutcracker.yml as
// nodes: ID the server's name, else its address as twemproxy hashes it
// (see twemproxy.Server.RingName); weight as configured; address to dial;
// zone from the pool's kolco "zones" key (by name, else by address). An
// empty pool means the file's only pool. The nodes come in file order.
// The error wraps [ErrBadContent] (and twemproxy.ErrBadServer for a bad
// server line, [kolco.ErrDuplicateNode] for a name listed twice).
func ParseNutcracker(data []byte, pool string) (nodes []kolco.Node, err error) {
	defer func() {
		// The YAML decoder is not ours; never let a panic in it reach the caller.
		if r := recover(); r != nil {
			nodes, err = nil, fmt.Errorf("%w: yaml: %v", ErrBadContent, r)
		}
	}()
	var pools map[string]yaml.Node
	if err := yaml.Unmarshal(data, &pools); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadContent, err)
	}
	delete(pools, globalKey)
	if pool == "" {
		if len(pools) != 1 {
			return nil, fmt.Errorf("%w: %d pools (%s): name the one to read", ErrBadContent, len(pools), poolNames(pools))
		}
		for name := range pools {
			pool = name
		}
	}
	raw, ok := pools[pool]
	if !ok {
		return nil, fmt.Errorf("%w: no pool %q (pools: %s)", ErrBadContent, pool, poolNames(pools))
	}
	var p nutcrackerPool
	if err := raw.Decode(&p); err != nil {
		return nil, fmt.Errorf("%w: pool %q: %w", ErrBadContent, pool, err)
	}
	nodes, err = p.nodes()
	if err != nil {
		return nil, fmt.Errorf("%w: pool %q: %w", ErrBadContent, pool, err)
	}
	return nodes, nil
}

// nodes converts the pool's servers, refusing duplicate names or
// addresses, zones for no server, and an empty list.
func (p *nutcrackerPool) nodes() ([]kolco.Node, error) {
	if len(p.Servers) == 0 {
		return nil, fmt.Errorf("servers: none given")
	}
	nodes := make([]kolco.Node, 0, len(p.Servers))
	byName := map[string]int{}
	byAddr := map[string]int{}
	for i, line := range p.Servers {
		s, err := twemproxy.ParseServer(line)
		if err != nil {
			return nil, fmt.Errorf("servers: %d: %w", i+1, err)
		}
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
	for server, zone := range p.Zones {
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

func poolNames(pools map[string]yaml.Node) string {
	names := make([]string, 0, len(pools))
	for name := range pools {
		names = append(names, name)
	}
	if len(names) == 0 {
		return "none"
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
