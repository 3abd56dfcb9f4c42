package continuum

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"testing"
)

var sink int

// pair is a point with its owner, in the order added.
type pair[P Point] struct {
	p     P
	owner int
}

// reference is the straightforward continuum the package is checked
// against: pairs stably sorted by point, equal points thinned as ties
// says, searched by a linear scan.
type reference[P Point] []pair[P]

func newReference[P Point](added []pair[P], ties Ties) reference[P] {
	r := append(reference[P](nil), added...)
	sort.SliceStable(r, func(i, j int) bool { return r[i].p < r[j].p })
	if ties == KeepFirst {
		out := r[:0]
		for i, x := range r {
			if i == 0 || x.p != r[i-1].p {
				out = append(out, x)
			}
		}
		r = out
	}
	return r
}

func (r reference[P]) search(h P) int {
	for i, x := range r {
		if x.p >= h {
			return i
		}
	}
	return 0
}

func (r reference[P]) nearest(h P) int {
	next := r.search(h)
	prev := (next + len(r) - 1) % len(r)
	if h-r[prev].p <= r[next].p-h {
		return prev
	}
	return next
}

func build[P Point](added []pair[P], ties Ties) Continuum[P] {
	var b Builder[P]
	for _, x := range added {
		b.Add(x.p, x.owner)
	}
	return b.Build(ties)
}

// check compares c with the reference for every hash in hs.
func check[P Point](t *testing.T, added []pair[P], ties Ties, hs []P) {
	t.Helper()
	c, r := build(added, ties), newReference(added, ties)
	if c.Len() != len(r) {
		t.Fatalf("Len = %d, want %d", c.Len(), len(r))
	}
	for i, x := range r {
		if c.At(i) != x.p || c.Owner(i) != x.owner {
			t.Fatalf("point %d = %d owned by %d, want %d owned by %d", i, c.At(i), c.Owner(i), x.p, x.owner)
		}
	}
	if len(r) == 0 {
		return
	}
	for _, h := range hs {
		if got, want := c.Search(h), r.search(h); got != want {
			t.Fatalf("Search(%d) = %d, want %d", h, got, want)
		}
		if got, want := c.Locate(h), r[r.search(h)].owner; got != want {
			t.Fatalf("Locate(%d) = %d, want %d", h, got, want)
		}
		if got, want := c.Nearest(h), r.nearest(h); got != want {
			t.Fatalf("Nearest(%d) = %d, want %d", h, got, want)
		}
	}
}

func TestSearch(t *testing.T) {
	// Points 10, 20, 20, 30 owned by 0, 1, 2, 3.
	added := []pair[uint32]{{20, 1}, {10, 0}, {30, 3}, {20, 2}}
	c := build(added, KeepAll)
	for _, tc := range []struct {
		h           uint32
		search, own int
	}{
		{0, 0, 0},         // below the first point
		{9, 0, 0},         // just below the first
		{10, 0, 0},        // on a point
		{11, 1, 1},        // between points: the next one
		{19, 1, 1},        // just below the equal points
		{20, 1, 1},        // equal points: the first added
		{21, 3, 3},        // just after them
		{30, 3, 3},        // the last point
		{31, 0, 0},        // past the last point: wrap
		{1<<32 - 1, 0, 0}, // the largest hash
	} {
		t.Run(strconv.Itoa(int(tc.h)), func(t *testing.T) {
			if got := c.Search(tc.h); got != tc.search {
				t.Errorf("Search = %d, want %d", got, tc.search)
			}
			if got := c.Locate(tc.h); got != tc.own {
				t.Errorf("Locate = %d, want %d", got, tc.own)
			}
		})
	}
}

func TestTies(t *testing.T) {
	added := []pair[uint32]{{20, 1}, {10, 0}, {20, 2}, {20, 3}}
	for _, tc := range []struct {
		ties   Ties
		owners []int
	}{
		{KeepAll, []int{0, 1, 2, 3}},
		{KeepFirst, []int{0, 1}},
	} {
		t.Run(fmt.Sprint(tc.ties), func(t *testing.T) {
			c := build(added, tc.ties)
			var got []int
			for i := range c.Len() {
				got = append(got, c.Owner(i))
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.owners) {
				t.Errorf("owners in point order = %v, want %v", got, tc.owners)
			}
		})
	}
}

// TestNearest checks HAProxy's choice between the point at or after h and
// the one before, with the distances measured across zero.
func TestNearest(t *testing.T) {
	c := build([]pair[uint32]{{100, 0}, {200, 1}, {1<<32 - 50, 2}}, KeepAll)
	for _, tc := range []struct {
		name string
		h    uint32
		want int
	}{
		{"on a point", 200, 1},
		{"nearer the next", 160, 1},
		{"nearer the previous", 140, 0},
		{"a tie goes to the previous", 150, 0},
		{"before the first, nearer the last across zero", 10, 2},
		{"before the first, nearer it", 50, 0},
		{"a tie across zero", 25, 2},
		{"past the last", 1<<32 - 10, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := c.Nearest(tc.h); got != tc.want {
				t.Errorf("Nearest(%d) = %d, want %d", tc.h, got, tc.want)
			}
		})
	}
}

func TestRepeated(t *testing.T) {
	for _, tc := range []struct {
		name   string
		points []uint64
		want   uint64
		found  bool
	}{
		{"none", []uint64{3, 1, 2}, 0, false},
		{"one repeat", []uint64{3, 1, 3}, 3, true},
		{"the first of two", []uint64{5, 2, 5, 2}, 2, true},
		{"empty", nil, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b Builder[uint64]
			for i, p := range tc.points {
				b.Add(p, i)
			}
			c := b.Build(KeepAll)
			if got, found := c.Repeated(); got != tc.want || found != tc.found {
				t.Errorf("Repeated = %d, %v; want %d, %v", got, found, tc.want, tc.found)
			}
		})
	}
}

// TestWalk checks that Walk wraps, so that a walk from any point visits
// the ring in order.
func TestWalk(t *testing.T) {
	c := build([]pair[uint64]{{30, 2}, {10, 0}, {20, 1}}, KeepAll)
	start := c.Search(25)
	var got []int
	for step := range 4 {
		got = append(got, c.Walk(start, step))
	}
	if fmt.Sprint(got) != "[2 0 1 2]" {
		t.Errorf("walk from 25 = %v, want [2 0 1 2]", got)
	}
}

func TestZero(t *testing.T) {
	var c Continuum[uint32]
	if c.Len() != 0 || c.Search(5) != 0 {
		t.Errorf("zero continuum: Len %d, Search %d", c.Len(), c.Search(5))
	}
	var b Builder[uint32]
	if c := b.Build(KeepFirst); c.Len() != 0 {
		t.Errorf("empty build has %d points", c.Len())
	}
}

func TestRandomAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 10, 100, 1000} {
		for _, span := range []uint64{4, 1000, 1 << 32} {
			t.Run(fmt.Sprintf("n=%d/span=%d", n, span), func(t *testing.T) {
				added32 := make([]pair[uint32], n)
				added64 := make([]pair[uint64], n)
				for i := range added32 {
					v := rng.Uint64N(span)
					added32[i] = pair[uint32]{uint32(v), rng.IntN(8)}
					added64[i] = pair[uint64]{v << 31, added32[i].owner}
				}
				hs32 := make([]uint32, 200)
				hs64 := make([]uint64, 200)
				for i := range hs32 {
					hs32[i] = uint32(rng.Uint64N(span + 2))
					hs64[i] = uint64(hs32[i]) << 31
				}
				hs32 = append(hs32, 0, 1<<32-1)
				hs64 = append(hs64, 0, 1<<64-1)
				for _, ties := range []Ties{KeepAll, KeepFirst} {
					check(t, added32, ties, hs32)
					check(t, added64, ties, hs64)
				}
			})
		}
	}
}

// FuzzContinuum checks Build and every search against the reference. The
// input is read as 5-byte records: a point of one byte's range (so that
// ties are common) scaled by the second, and an owner; the last 4 bytes of
// the input are the hash.
func FuzzContinuum(f *testing.F) {
	f.Add([]byte{1, 0, 0, 2, 0, 3, 1, 0, 0, 2, 0, 0, 0, 5})   // a tie
	f.Add([]byte{255, 255, 255, 255, 7, 0, 0, 0, 0})          // one point at the top
	f.Add([]byte{})                                           // nothing
	f.Add([]byte{9, 0, 0, 0, 1, 9, 0, 0, 0, 2, 200, 0, 0, 0}) // equal points, hash past them
	f.Fuzz(func(t *testing.T, data []byte) {
		var added32 []pair[uint32]
		var added64 []pair[uint64]
		for len(data) >= 9 {
			v := binary.LittleEndian.Uint32(data)
			added32 = append(added32, pair[uint32]{v, int(data[4])})
			added64 = append(added64, pair[uint64]{uint64(v) * 0x9e3779b9, int(data[4])})
			data = data[5:]
		}
		var h uint32
		if len(data) >= 4 {
			h = binary.LittleEndian.Uint32(data)
		}
		hs32 := []uint32{h, h - 1, h + 1, 0, 1<<32 - 1}
		hs64 := []uint64{uint64(h) * 0x9e3779b9, uint64(h), 0, 1<<64 - 1}
		for _, ties := range []Ties{KeepAll, KeepFirst} {
			check(t, added32, ties, hs32)
			check(t, added64, ties, hs64)
		}
	})
}

func TestNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var b Builder[uint32]
	for i := range 1000 {
		b.Add(rng.Uint32(), i%10)
	}
	c := b.Build(KeepAll)
	h := rng.Uint32()
	for name, f := range map[string]func(){
		"Search":  func() { sink += c.Search(h) },
		"Locate":  func() { sink += c.Locate(h) },
		"Nearest": func() { sink += c.Nearest(h) },
		"Walk":    func() { sink += c.Walk(999, 7) },
	} {
		if a := testing.AllocsPerRun(100, f); a != 0 {
			t.Errorf("%s allocates %v times", name, a)
		}
	}
}

func BenchmarkLocate(b *testing.B) {
	for _, n := range []int{160, 16_000, 1_600_000} {
		rng := rand.New(rand.NewPCG(5, 6))
		var b32 Builder[uint32]
		var b64 Builder[uint64]
		for i := range n {
			b32.Add(rng.Uint32(), i%100)
			b64.Add(rng.Uint64(), i%100)
		}
		c32, c64 := b32.Build(KeepAll), b64.Build(KeepAll)
		hs := make([]uint64, 1024)
		for i := range hs {
			hs[i] = rng.Uint64()
		}
		b.Run("uint32/points="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				sink += c32.Locate(uint32(hs[i&1023]))
				i++
			}
		})
		b.Run("uint64/points="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				sink += c64.Locate(hs[i&1023])
				i++
			}
		})
		b.Run("nearest/points="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				sink += c32.Nearest(uint32(hs[i&1023]))
				i++
			}
		})
	}
}

func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{160, 16_000, 160_000} {
		rng := rand.New(rand.NewPCG(7, 8))
		p32 := make([]uint32, n)
		p64 := make([]uint64, n)
		for i := range n {
			p32[i], p64[i] = rng.Uint32(), rng.Uint64()
		}
		b.Run("uint32/points="+strconv.Itoa(n), func(b *testing.B) { benchBuild(b, p32) })
		b.Run("uint64/points="+strconv.Itoa(n), func(b *testing.B) { benchBuild(b, p64) })
	}
}

func benchBuild[P Point](b *testing.B, points []P) {
	b.ReportAllocs()
	for b.Loop() {
		var bl Builder[P]
		bl.Grow(len(points))
		for i, p := range points {
			bl.Add(p, i%100)
		}
		c := bl.Build(KeepAll)
		sink += c.Len()
	}
}
