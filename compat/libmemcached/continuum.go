package libmemcached

import (
	"strconv"

	"github.com/kolco-dev/kolco/compat/hashkit"
	"github.com/kolco-dev/kolco/internal/continuum"
)

// pointsPerServer is libmemcached's point count for an unweighted ketama
// server (MEMCACHED_POINTS_PER_SERVER).
const pointsPerServer = 100

// appendPointString appends the string libmemcached hashes for point group
// i of s: "/host:port-i" in spy mode, else "host-i" on port 11211 and
// "host:port-i" on any other.
func appendPointString(b []byte, s Server, spy bool, i int) []byte {
	if spy {
		b = append(b, '/')
	}
	b = append(b, s.Host...)
	if spy || s.Port != DefaultPort {
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(s.Port), 10)
	}
	b = append(b, '-')
	return strconv.AppendInt(b, int64(i), 10)
}

// buildContinuum adds the points server by server in libmemcached's server
// order, so that equal points, which the continuum keeps in the order
// added, are ordered as libmemcached's sort orders them: by server.
func (p *Pool) buildContinuum() {
	var total uint64
	for _, s := range p.servers {
		total += uint64(s.Weight)
	}
	var b continuum.Builder[uint32]
	b.Grow(160 * len(p.servers))
	var buf []byte
	for _, i := range p.order {
		s := p.servers[i]
		if !p.weights {
			for j := range pointsPerServer {
				buf = appendPointString(buf[:0], s, p.spy, j)
				b.Add(p.hash(buf), int(i))
			}
			continue
		}
		pps := hashkit.KetamaPoints(uint64(s.Weight), total, len(p.servers))
		for j := range pps / 4 {
			buf = appendPointString(buf[:0], s, p.spy, j)
			for _, v := range hashkit.MD5Points(buf) {
				b.Add(v, int(i))
			}
		}
	}
	p.ring = b.Build(continuum.KeepAll)
}
