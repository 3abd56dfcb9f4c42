package proxy

import (
	"maps"
	"net"
	"strconv"
	"strings"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat/twemproxy"
)

// overNodes returns a copy of p over nodes, the servers a state file
// records the pool as placed over (see recordedStart): a server p still
// names keeps its line, since its address may be new; one p no longer
// names is reached at its recorded address, named by its ID, which is
// what placement hashes. Each takes its recorded weight, and its recorded
// zone where p gives it another.
func overNodes(p *PoolConfig, nodes []kolco.Node) *PoolConfig {
	configured := map[string]twemproxy.Server{}
	for _, s := range p.Servers {
		configured[s.RingName()] = s
	}
	c := *p
	c.Servers, c.Zones = nil, maps.Clone(p.Zones)
	for _, n := range nodes {
		s, named := configured[n.ID]
		if !named {
			s = twemproxy.Server{Host: n.Addr, Name: n.ID}
			if host, port, err := net.SplitHostPort(n.Addr); err == nil && !strings.HasPrefix(n.Addr, "/") {
				s.Host = host
				s.Port, _ = strconv.Atoi(port)
			}
		}
		s.Weight = max(int(n.Weight), 1)
		c.Servers = append(c.Servers, s)
		if n.Zone != "" && c.zoneOf(s) != n.Zone {
			if c.Zones == nil {
				c.Zones = map[string]string{}
			}
			c.Zones[s.RingName()] = n.Zone
		}
	}
	return &c
}
