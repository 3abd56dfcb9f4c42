package twemproxy

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat/hashkit"
)

// maxPointString is the longest point string nutcracker hashes: its buffer
// holds KETAMA_MAX_HOSTLEN = 273 bytes including the terminating NUL.
const maxPointString = 272

// pointsPerServer returns nutcracker's point count for a server of weight w
// among n live servers of total weight total. Every step is rounded to
// float32 as the C expression
// floorf((float)(pct*160/4*(float)n + 0.0000000001))*4 is; the explicit
// conversions also keep the compiler from fusing operations.
func pointsPerServer(w, total uint64, n int) int {
	pct := float32(w) / float32(total)
	x := float32(pct * 160)
	x = float32(x / 4)
	x = float32(x * float32(n))
	y := float32(float64(x) + 0.0000000001)
	return int(float32(math.Floor(float64(y))) * 4)
}

type point struct {
	value uint32
	rank  int32 // position in nutcracker's server order, for stable sorting
	owner int32
}

func (p *Pool) buildKetama(order []int32) error {
	var total uint64
	for _, s := range p.servers {
		total += uint64(s.Weight)
	}
	pts := make([]point, 0, 160*len(p.servers))
	buf := make([]byte, 0, maxPointString+16)
	for rank, i := range order {
		s := p.servers[i]
		name := s.RingName()
		pps := pointsPerServer(uint64(s.Weight), total, len(p.servers))
		for j := 0; j < pps/4; j++ {
			buf = strconv.AppendInt(append(append(buf[:0], name...), '-'), int64(j), 10)
			if len(buf) > maxPointString {
				buf = buf[:maxPointString]
			}
			for _, v := range hashkit.MD5Points(buf) {
				pts = append(pts, point{v, int32(rank), i})
			}
		}
	}
	if len(pts) == 0 {
		return fmt.Errorf("%w: no server has a ketama point", kolco.ErrBadWeight)
	}
	// glibc's qsort on this array is a merge sort: stable, so equal values
	// keep nutcracker's server order. The rank makes that explicit.
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
	return nil
}
