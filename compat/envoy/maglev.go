package envoy

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/cespare/xxhash/v2"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/bytestr"
	"github.com/kolco-dev/kolco/internal/nodeset"
)

// DefaultTableSize is Envoy's default Maglev table size, a prime.
const DefaultTableSize = 65537

// maxTableSize bounds the table (Envoy allows up to 5000011).
const maxTableSize = 5000011

// maxRetries bounds the retry walk of [Maglev.LocateN].
const maxRetries = 1024

// MaglevConfig is a maglev configuration. The zero value means Envoy's
// default.
type MaglevConfig struct {
	// TableSize is table_size, a prime; 0 means 65537.
	TableSize uint64
}

// Maglev is Envoy's Maglev table. It is immutable and safe for concurrent
// use; lookups do not allocate.
type Maglev struct {
	list  nodeset.List
	table []int32 // entry -> host index
}

var _ kolco.Placement = (*Maglev)(nil)

// NewMaglev builds the table Envoy builds for these hosts. The error wraps
// the errors of [NewRing], and [kolco.ErrBadConfig] for a table size that is
// not a prime up to 5000011.
func NewMaglev(hosts []Host, cfg MaglevConfig) (*Maglev, error) {
	m := cfg.TableSize
	if m == 0 {
		m = DefaultTableSize
	}
	if m > maxTableSize || !isPrime(m) {
		return nil, fmt.Errorf("%w: envoy: maglev table size %d is not a prime up to %d", kolco.ErrBadConfig, m, maxTableSize)
	}
	list, w, _, maxW, err := normalise(hosts)
	if err != nil {
		return nil, err
	}
	type entry struct {
		host               int32
		offset, skip, next uint64
		weight, target     float64
	}
	es := make([]entry, len(hosts))
	seed1 := xxhash.NewWithSeed(1)
	for i, h := range hosts {
		seed1.ResetWithSeed(1)
		seed1.WriteString(h.key())
		es[i] = entry{host: int32(i), offset: xxhash.Sum64String(h.key()) % m, skip: seed1.Sum64()%(m-1) + 1, weight: w[i]}
	}
	slices.SortFunc(es, func(a, b entry) int { return cmp.Compare(hosts[a.host].key(), hosts[b.host].key()) })
	g := &Maglev{list: list, table: make([]int32, m)}
	for i := range g.table {
		g.table[i] = -1
	}
	filled := uint64(0)
	for round := uint32(1); filled < m; round++ {
		for i := 0; i < len(es) && filled < m; i++ {
			e := &es[i]
			if float64(round)*e.weight < e.target {
				continue
			}
			e.target += maxW
			c := (e.offset + e.skip*e.next) % m
			for g.table[c] >= 0 {
				e.next++
				c = (e.offset + e.skip*e.next) % m
			}
			g.table[c] = e.host
			e.next++
			filled++
		}
	}
	return g, nil
}

func isPrime(n uint64) bool {
	if n < 2 {
		return false
	}
	for d := uint64(2); d*d <= n; d++ {
		if n%d == 0 {
			return false
		}
	}
	return true
}

// Index returns the position of the host Envoy picks for a request whose
// hash policy hashes key (XXH64, seed 0).
func (g *Maglev) Index(key []byte) int { return g.IndexHash(xxhash.Sum64(key)) }

// IndexHash returns the position of the host Envoy picks for request hash h.
func (g *Maglev) IndexHash(h uint64) int { return int(g.table[h%uint64(len(g.table))]) }

// Locate returns the host Envoy picks for key. The error is always nil.
func (g *Maglev) Locate(key string) (*kolco.Node, error) {
	return g.list.At(g.Index(bytestr.Of(key))), nil
}

// LocateN appends up to n distinct hosts in Envoy's retry order: attempt a
// looks up h ^ (2^64 - a). The error wraps [kolco.ErrBadCount] when n < 1.
func (g *Maglev) LocateN(dst []kolco.Node, key string, n int) ([]kolco.Node, error) {
	h := xxhash.Sum64String(key)
	return g.list.AppendN(dst, n, maxRetries+1, func(a int) int {
		if a == 0 {
			return g.IndexHash(h)
		}
		return g.IndexHash(h ^ (^uint64(0) - uint64(a) + 1))
	})
}

// Nodes returns the hosts sorted by key.
func (g *Maglev) Nodes() []kolco.Node { return g.list.Nodes() }
