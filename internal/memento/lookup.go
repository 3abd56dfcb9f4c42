package memento

import (
	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/mix"
)

// rehash derives the key's hash for a second choice after landing on
// removed bucket b: MurmurHash3's fmix64 of the key hash and the bucket.
func rehash(kh uint64, b int) uint64 {
	return mix.Fmix64(kh ^ (uint64(b)+1)*mix.Golden)
}

// replacer returns the replacer of bucket b, or -1 if b is working. The
// owners already chosen (chosen, in order) count as removed after every
// real removal, the j-th leaving s.working-1-j buckets.
func (s *state) replacer(b int, chosen []kolco.Node) int {
	if r := s.rep[b]; r != 0 {
		return int(r) - 1
	}
	id := s.ids[b]
	for j := range chosen {
		if chosen[j].ID == id {
			return s.working - 1 - j
		}
	}
	return -1
}

// locate returns the bucket of the key with hash kh over the first size
// buckets, treating the chosen owners as removed. The chosen owners past
// size were removed by shrinking the array (see state.remove), so no
// bucket below size is theirs and the rest keep the replacers their
// removal would give them. The caller guarantees at least one working
// bucket below size that is not chosen.
func (s *state) locate(bucket BucketFunc, kh uint64, size int, chosen []kolco.Node) int {
	return s.walk(kh, bucket(kh, size), chosen)
}

// walk returns the bucket of the key with hash kh whose bucket function
// gave b, following replacers from b as locate does.
func (s *state) walk(kh uint64, b int, chosen []kolco.Node) int {
	r := s.replacer(b, chosen)
	// Every step moves to a bucket removed later (a smaller replacer) or
	// to a working one, so the loops end; the bound only guards against a
	// corrupted table.
	for steps := 0; r >= 0; steps++ {
		if r == 0 || steps > 4*len(s.ids)+64 {
			return s.fallback(b, chosen)
		}
		b = int(rehash(kh, b) % uint64(r))
		next := s.replacer(b, chosen)
		for next >= r {
			b = next
			next = s.replacer(b, chosen)
		}
		r = next
	}
	return b
}

// fallback returns the first bucket from b on that is working and not
// chosen. Lookups never need it on a consistent table.
func (s *state) fallback(b int, chosen []kolco.Node) int {
	for i := range len(s.ids) {
		c := (b + i) % len(s.ids)
		if s.replacer(c, chosen) < 0 {
			return c
		}
	}
	return 0
}
