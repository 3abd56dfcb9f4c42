package mrc

// memcached's memory and eviction, as 1.6 does them with its defaults
// (-f 1.25, -n 48, 1 MiB pages, hot_lru_pct 20, warm_lru_pct 40).

// Slab geometry.
const (
	// pageSize is a slab page: -m counts these.
	pageSize = 1 << 20
	// itemHeader is an item's fixed part: the struct (48 bytes on 64-bit)
	// and the CAS value (8).
	itemHeader = 48 + 8
	// minChunk is the smallest slab chunk: the struct and -n 48.
	minChunk = 48 + 48
	// chunkMax is the largest chunk (-o slab_chunk_max, half a page);
	// larger items are chained from chunks of this size.
	chunkMax = pageSize / 2
)

// slabClasses are memcached's chunk sizes: from minChunk, each 1.25 times
// the one before rounded up to 8 bytes, then chunkMax.
var slabClasses = func() []int64 {
	var out []int64
	for size := float64(minChunk); size <= chunkMax/1.25; size *= 1.25 {
		c := int64(size)
		if c%8 != 0 {
			c += 8 - c%8
		}
		size = float64(c)
		out = append(out, c)
	}
	return append(out, chunkMax)
}()

// MemcachedFootprint returns the memory an item of a key of keyLen bytes
// and a value of valueLen bytes takes in memcached 1.6 with its default
// slab settings: the item (56 bytes of header and CAS, the key and its
// terminator, the value and its CRLF) rounded up to its slab chunk, and
// the chunk's share of its page, which holds a whole number of chunks. An
// item over half a page is chained from half-page chunks.
func MemcachedFootprint(keyLen int, valueLen int64) float64 {
	item := int64(itemHeader+keyLen+1) + valueLen + 2
	if item > chunkMax {
		chunks := (item + chunkMax - 1) / chunkMax
		return float64(chunks * chunkMax)
	}
	for _, c := range slabClasses {
		if item <= c {
			return float64(pageSize) / float64(pageSize/c)
		}
	}
	return chunkMax // not reached: the last class is chunkMax
}

// Segments of memcached's LRU.
const (
	hot = iota
	warm
	cold
	absent
)

// segmented is memcached's segmented LRU over dense keys: new items enter
// HOT; HOT and WARM over their share of the bytes pass their tails on, to
// WARM if read twice since they last moved (active), else to COLD; an
// active item read in COLD moves to WARM; evictions take COLD's tail, or
// push HOT's (then WARM's) tail to COLD when COLD is empty. An item is
// active after its second read, as memcached marks it (FETCHED, then
// ACTIVE).
type segmented struct {
	capacity   float64
	prev, next []int32 // list links by key; -1 ends
	seg        []uint8
	fetched    []bool
	active     []bool
	size       []float64
	head, tail [3]int32
	bytes      [3]float64
}

// replaySegmented returns the reads of refs that miss a segmented LRU of
// capacity bytes.
func replaySegmented(refs []Ref, capacity float64, fillOnMiss bool) int {
	n := 0
	for _, r := range refs {
		n = max(n, int(r.Key)+1)
	}
	s := &segmented{capacity: capacity, prev: make([]int32, n), next: make([]int32, n), seg: make([]uint8, n),
		fetched: make([]bool, n), active: make([]bool, n), size: make([]float64, n)}
	for i := range s.seg {
		s.seg[i] = absent
	}
	for i := range s.head {
		s.head[i], s.tail[i] = -1, -1
	}
	misses := 0
	for _, r := range refs {
		switch r.Op {
		case Get:
			if !s.get(r.Key) {
				misses++
				if fillOnMiss {
					s.set(r.Key, r.Size)
				}
			}
		case Set:
			s.set(r.Key, r.Size)
		case Delete:
			s.remove(r.Key)
		}
	}
	return misses
}

// get reads k and reports whether it was cached.
func (s *segmented) get(k int32) bool {
	if s.seg[k] == absent {
		return false
	}
	if !s.active[k] {
		if !s.fetched[k] {
			s.fetched[k] = true
		} else if s.seg[k] == cold {
			s.move(k, warm)
		} else {
			s.active[k] = true
		}
	}
	s.juggle()
	return true
}

// set stores k as a new item of size bytes; one larger than the cache is
// not stored.
func (s *segmented) set(k int32, size float64) {
	s.remove(k)
	if size > s.capacity {
		return
	}
	for s.total()+size > s.capacity {
		switch {
		case s.tail[cold] >= 0:
			s.remove(s.tail[cold])
		case s.tail[hot] >= 0:
			s.move(s.tail[hot], cold)
		case s.tail[warm] >= 0:
			s.move(s.tail[warm], cold)
		default: // empty: what the sums hold is rounding
			s.bytes = [3]float64{}
		}
	}
	s.size[k], s.fetched[k], s.active[k] = size, false, false
	s.link(k, hot)
	s.juggle()
}

// juggle passes the tails of HOT and WARM on while they hold more than
// their shares, as memcached's LRU maintainer does.
func (s *segmented) juggle() {
	total := s.total()
	for s.tail[hot] >= 0 && s.bytes[hot] > total*0.20 {
		k := s.tail[hot]
		if s.active[k] {
			s.move(k, warm)
		} else {
			s.move(k, cold)
		}
	}
	for s.tail[warm] >= 0 && s.bytes[warm] > total*0.40 {
		k := s.tail[warm]
		if s.active[k] {
			s.move(k, warm) // to WARM's head, no longer active
		} else {
			s.move(k, cold)
		}
	}
}

func (s *segmented) total() float64 { return s.bytes[hot] + s.bytes[warm] + s.bytes[cold] }

// move unlinks k and links it at the head of segment to, inactive.
func (s *segmented) move(k int32, to uint8) {
	s.unlink(k)
	s.active[k] = false
	s.link(k, to)
}

// remove drops k from the cache, if there.
func (s *segmented) remove(k int32) {
	if s.seg[k] != absent {
		s.unlink(k)
		s.seg[k] = absent
	}
}

func (s *segmented) link(k int32, g uint8) {
	s.seg[k], s.prev[k], s.next[k] = g, -1, s.head[g]
	if s.head[g] >= 0 {
		s.prev[s.head[g]] = k
	}
	s.head[g] = k
	if s.tail[g] < 0 {
		s.tail[g] = k
	}
	s.bytes[g] += s.size[k]
}

func (s *segmented) unlink(k int32) {
	g := s.seg[k]
	if p := s.prev[k]; p >= 0 {
		s.next[p] = s.next[k]
	} else {
		s.head[g] = s.next[k]
	}
	if n := s.next[k]; n >= 0 {
		s.prev[n] = s.prev[k]
	} else {
		s.tail[g] = s.prev[k]
	}
	s.bytes[g] -= s.size[k]
}
