package nginx

import (
	"hash/crc32"
	"slices"
	"strconv"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/bytestr"
	"github.com/kolco-dev/kolco/internal/nodeset"
)

// maxRehash is the number of extra hashes nginx tries before it gives up
// and falls back to round robin.
const maxRehash = 20

// Modulo is the placement of plain `hash $key;`: a hash of the key modulo
// the total weight, rehashed past servers marked down. It is immutable and
// safe for concurrent use; lookups do not allocate.
type Modulo struct {
	list   nodeset.List
	down   []bool                // down[i]: server i is marked down
	upper  []int                 // upper[i]: cumulative weight of servers 0..i
	prefix [maxRehash + 1]uint32 // prefix[n]: crc32 of decimal(n), 0 for n = 0
}

var _ kolco.Placement = (*Modulo)(nil)

// NewModulo returns the plain hash placement of these server lines. Servers
// marked down keep their share of the weight; a key that hashes to one is
// rehashed, as nginx does. The error wraps the errors of [NewConsistent].
func NewModulo(servers []Server) (*Modulo, error) {
	list, err := nodeList(servers)
	if err != nil {
		return nil, err
	}
	h := &Modulo{list: list, upper: make([]int, len(servers)), down: make([]bool, len(servers))}
	for n := 1; n <= maxRehash; n++ {
		h.prefix[n] = crc32.ChecksumIEEE(strconv.AppendInt(nil, int64(n), 10))
	}
	total := 0
	for i, s := range servers {
		total += s.weight()
		h.upper[i] = total
		h.down[i] = s.Down
	}
	return h, nil
}

// Index returns the position, in the configuration, of the server nginx
// sends key to. When 21 hashes in a row land on servers marked down nginx
// gives up and picks by round robin, which depends on earlier requests;
// Index then returns the first server that is up.
func (h *Modulo) Index(key []byte) int {
	i, _ := h.index(key)
	return i
}

// index also reports whether the rehash sequence found a server that is up
// (false: nginx would fall back to round robin).
func (h *Modulo) index(key []byte) (int, bool) {
	var sum uint32
	for n := range maxRehash + 1 {
		sum += crc32.Update(h.prefix[n], crc32.IEEETable, key) >> 16 & 0x7fff
		if s := h.serverOf(sum); !h.down[s] {
			return s, true
		}
	}
	return slices.Index(h.down, false), false
}

// serverOf walks the servers with the accumulated hash as nginx does.
func (h *Modulo) serverOf(sum uint32) int {
	w := int(sum % uint32(h.upper[len(h.upper)-1]))
	lo, hi := 0, len(h.upper)-1
	for lo < hi { // first i with w < upper[i]
		m := int(uint(lo+hi) >> 1)
		if w < h.upper[m] {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// Locate returns the server nginx sends key to. The error is always nil.
func (h *Modulo) Locate(key string) (*kolco.Node, error) {
	return h.list.At(h.Index(bytestr.Of(key))), nil
}

// LocateN appends up to n distinct servers in nginx's retry order, the
// rehash sequence, then in configuration order. The error wraps
// [kolco.ErrBadCount] when n < 1.
func (h *Modulo) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	k := bytestr.Of(key)
	var sum uint32
	return h.list.AppendN(dst, n, maxRehash+1, func(step int) int {
		sum += crc32.Update(h.prefix[step], crc32.IEEETable, k) >> 16 & 0x7fff
		return h.serverOf(sum)
	})
}

// Nodes returns the servers that are up, sorted by address.
func (h *Modulo) Nodes() []kolco.Node { return h.list.Nodes() }
