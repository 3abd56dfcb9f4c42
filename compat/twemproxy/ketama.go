package twemproxy

import (
	"fmt"
	"strconv"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat/hashkit"
	"github.com/kolco-dev/kolco/internal/continuum"
)

// maxPointString is the longest point string nutcracker hashes: its buffer
// holds KETAMA_MAX_HOSTLEN = 273 bytes including the terminating NUL.
const maxPointString = 272

// buildKetama adds the points server by server in nutcracker's order. glibc's
// qsort on nutcracker's array is a merge sort, stable, so equal points keep
// that order; the continuum keeps equal points in the order added.
func (p *Pool) buildKetama(order []int32) error {
	var total uint64
	for _, s := range p.servers {
		total += uint64(s.Weight)
	}
	var b continuum.Builder[uint32]
	b.Grow(160 * len(p.servers))
	buf := make([]byte, 0, maxPointString+16)
	for _, i := range order {
		s := p.servers[i]
		name := s.RingName()
		pps := hashkit.KetamaPoints(uint64(s.Weight), total, len(p.servers))
		for j := range pps / 4 {
			buf = strconv.AppendInt(append(append(buf[:0], name...), '-'), int64(j), 10)
			if len(buf) > maxPointString {
				buf = buf[:maxPointString]
			}
			for _, v := range hashkit.MD5Points(buf) {
				b.Add(v, int(i))
			}
		}
	}
	if b.Len() == 0 {
		return fmt.Errorf("%w: no server has a ketama point", kolco.ErrBadWeight)
	}
	p.ring = b.Build(continuum.KeepAll)
	return nil
}
