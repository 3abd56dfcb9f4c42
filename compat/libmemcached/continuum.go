package libmemcached

import (
	"math"
	"slices"
	"strconv"

	"github.com/kolco-dev/kolco/compat/hashkit"
)

// pointsPerServer is libmemcached's point count for an unweighted ketama
// server (MEMCACHED_POINTS_PER_SERVER).
const pointsPerServer = 100

// weightedPoints returns libmemcached's point count for a server of weight
// w among n servers of total weight total:
// floor((float)(pct*160/4*(float)n + 0.0000000001F))*4, every step in
// float32. The explicit conversions keep the compiler from fusing the
// multiply and add.
func weightedPoints(w, total uint64, n int) int {
	pct := float32(w) / float32(total)
	x := float32(pct * 160)
	x = float32(x / 4)
	x = float32(x * float32(n))
	x = float32(x + float32(0.0000000001))
	return int(math.Floor(float64(x)) * 4)
}

type point struct {
	value uint32
	rank  int32 // position in libmemcached's server order: the tie-breaker
	owner int32
}

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

func (p *Pool) buildContinuum() {
	var total uint64
	for _, s := range p.servers {
		total += uint64(s.Weight)
	}
	var pts []point
	var buf []byte
	for rank, i := range p.order {
		s := p.servers[i]
		if !p.weights {
			for j := 0; j < pointsPerServer; j++ {
				buf = appendPointString(buf[:0], s, p.spy, j)
				pts = append(pts, point{p.hash(buf), int32(rank), i})
			}
			continue
		}
		pps := weightedPoints(uint64(s.Weight), total, len(p.servers))
		for j := 0; j < pps/4; j++ {
			buf = appendPointString(buf[:0], s, p.spy, j)
			for _, v := range hashkit.MD5Points(buf) {
				pts = append(pts, point{v, int32(rank), i})
			}
		}
	}
	slices.SortFunc(pts, func(a, b point) int {
		if a.value != b.value {
			if a.value < b.value {
				return -1
			}
			return 1
		}
		return int(a.rank - b.rank)
	})
	p.points = make([]uint32, len(pts))
	p.owner = make([]int32, len(pts))
	for k, pt := range pts {
		p.points[k], p.owner[k] = pt.value, pt.owner
	}
}
