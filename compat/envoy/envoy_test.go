package envoy

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/bytestr"
)

var sink int

func hosts(keys ...string) []Host {
	hs := make([]Host, len(keys))
	for i, k := range keys {
		hs[i] = Host{Key: k, Addr: "127.0.0.1:" + k[len(k)-2:]}
	}
	return hs
}

// ringOf returns the ring's points and their owners.
func ringOf(r *Ring) ([]uint64, []int32) {
	points, owners := make([]uint64, r.ring.Len()), make([]int32, r.ring.Len())
	for i := range points {
		points[i], owners[i] = r.ring.At(i), int32(r.ring.Owner(i))
	}
	return points, owners
}

// TestRingEnvoyVectors replays RingHashLoadBalancerTest.Basic and
// BasicWithHostname from Envoy's ring_hash_lb_test.cc: six hosts, minimum
// ring size 12, and the ring positions and picks the test states.
func TestRingEnvoyVectors(t *testing.T) {
	byAddr := hosts("127.0.0.1:90", "127.0.0.1:91", "127.0.0.1:92", "127.0.0.1:93", "127.0.0.1:94", "127.0.0.1:95")
	r, err := NewRing(byAddr, RingConfig{MinRingSize: 12})
	if err != nil {
		t.Fatal(err)
	}
	want := []uint64{833437586790550860, 928266305478181108, 1033482794131418490, 3551244743356806947,
		3851675632748031481, 5583722120771150861, 6311230543546372928, 7700377290971790572,
		13144177310400110813, 13444792449719432967, 15516499411664133160, 16117243373044804889}
	wantOwner := []int32{4, 2, 0, 5, 3, 1, 1, 3, 5, 2, 4, 0}
	if points, owners := ringOf(r); fmt.Sprint(points) != fmt.Sprint(want) || fmt.Sprint(owners) != fmt.Sprint(wantOwner) {
		t.Fatalf("ring = %v %v\nwant %v %v", points, owners, want, wantOwner)
	}
	for h, want := range map[uint64]int{0: 4, math.MaxUint64: 4, 3551244743356806947: 5, 3551244743356806948: 3, 16117243373044804880: 0} {
		t.Run(fmt.Sprint("address/", h), func(t *testing.T) {
			if got := r.IndexHash(h); got != want {
				t.Errorf("IndexHash = %d, want %d", got, want)
			}
		})
	}
	byName := hosts("90", "91", "92", "93", "94", "95")
	r, _ = NewRing(byName, RingConfig{MinRingSize: 12})
	want = []uint64{1975508444536362413, 2376063919839173711, 2386806903309390596, 6749904478991551885,
		6803900775736438537, 7225015537174310577, 8787465352164086522, 11282020843382717940,
		13723418369486627818, 13776502110861797421, 14338313586354474791, 15364271037087512980}
	if points, _ := ringOf(r); fmt.Sprint(points) != fmt.Sprint(want) {
		t.Fatalf("hostname ring = %v\nwant %v", points, want)
	}
	for h, want := range map[uint64]int{0: 5, math.MaxUint64: 5, 7225015537174310577: 2, 6803900775736438537: 3} {
		t.Run(fmt.Sprint("hostname/", h), func(t *testing.T) {
			if got := r.IndexHash(h); got != want {
				t.Errorf("IndexHash = %d, want %d", got, want)
			}
		})
	}
}

// TestMaglevEnvoyVectors replays MaglevLoadBalancerTest.Basic,
// BasicWithHostName and Weighted from Envoy's maglev_lb_test.cc.
func TestMaglevEnvoyVectors(t *testing.T) {
	weighted := []Host{{Key: "127.0.0.1:90", Weight: 1}, {Key: "127.0.0.1:91", Weight: 2}}
	for _, c := range []struct {
		name  string
		hosts []Host
		size  uint64
		want  []int32
	}{
		{"Basic", hosts("127.0.0.1:90", "127.0.0.1:91", "127.0.0.1:92", "127.0.0.1:93", "127.0.0.1:94", "127.0.0.1:95"), 7, []int32{2, 4, 0, 1, 5, 0, 3}},
		{"BasicWithHostName", hosts("90", "91", "92", "93", "94", "95"), 7, []int32{2, 5, 0, 3, 4, 1, 0}},
		{"Weighted", weighted, 17, []int32{1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 0, 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, err := NewMaglev(c.hosts, MaglevConfig{TableSize: c.size})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(g.table) != fmt.Sprint(c.want) {
				t.Errorf("table = %v, want %v", g.table, c.want)
			}
		})
	}
}

// refRing and refMaglev transcribe Envoy's C++ loops with no shortcuts:
// strings built with fmt, a linear search, the table filled entry by entry.
func refRing(hs []Host, minSize, maxSize uint64, h uint64) int {
	sum := 0.0
	for _, x := range hs {
		sum += float64(x.weight())
	}
	minW := math.Inf(1)
	for _, x := range hs {
		minW = math.Min(minW, float64(x.weight())/sum)
	}
	scale := math.Min(math.Ceil(float64(minW*float64(minSize)))/minW, float64(maxSize))
	type pt struct {
		h uint64
		o int
	}
	var ring []pt
	cur, target := 0.0, 0.0
	for i, x := range hs {
		target += float64(scale * (float64(x.weight()) / sum))
		for j := 0; cur < target; j++ {
			ring = append(ring, pt{xxhash.Sum64String(fmt.Sprintf("%s_%d", x.key(), j)), i})
			cur++
		}
	}
	sort.SliceStable(ring, func(a, b int) bool { return ring[a].h < ring[b].h })
	for _, p := range ring {
		if p.h >= h {
			return p.o
		}
	}
	return ring[0].o
}

func refMaglev(hs []Host, m uint64) []int32 {
	order := make([]int, len(hs))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return hs[order[a]].key() < hs[order[b]].key() })
	sum, maxW := 0.0, 0.0
	for _, x := range hs {
		sum += float64(x.weight())
	}
	for _, x := range hs {
		maxW = math.Max(maxW, float64(x.weight())/sum)
	}
	next := make([]uint64, len(hs))
	target := make([]float64, len(hs))
	table := make([]int32, m)
	for i := range table {
		table[i] = -1
	}
	n := uint64(0)
	for it := 1; n < m; it++ {
		for _, i := range order {
			if n == m {
				break
			}
			w := float64(hs[i].weight()) / sum
			if float64(it)*w < target[i] {
				continue
			}
			target[i] += maxW
			d := xxhash.NewWithSeed(1)
			d.WriteString(hs[i].key())
			off, skip := xxhash.Sum64String(hs[i].key())%m, d.Sum64()%(m-1)+1
			for table[(off+skip*next[i])%m] >= 0 {
				next[i]++
			}
			table[(off+skip*next[i])%m] = int32(i)
			next[i]++
			n++
		}
	}
	return table
}

func randomHosts(r *rand.Rand, n int) []Host {
	hs := make([]Host, n)
	for i := range hs {
		hs[i] = Host{Addr: fmt.Sprintf("10.0.%d.%d:%d", r.IntN(4), r.IntN(256), 8000+i), Weight: uint32(r.IntN(5))}
	}
	return hs
}

func TestMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for _, n := range []int{1, 3, 7} {
		hs := randomHosts(r, n)
		ring, err := NewRing(hs, RingConfig{MinRingSize: 100, MaxRingSize: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for range 500 {
			h := r.Uint64()
			if got, want := ring.IndexHash(h), refRing(hs, 100, 1000, h); got != want {
				t.Fatalf("%v: ring IndexHash(%d) = %d, reference %d", hs, h, got, want)
			}
		}
		g, err := NewMaglev(hs, MaglevConfig{TableSize: 1009})
		if err != nil {
			t.Fatal(err)
		}
		if want := refMaglev(hs, 1009); fmt.Sprint(g.table) != fmt.Sprint(want) {
			t.Fatalf("%v: maglev table differs from the reference", hs)
		}
	}
}

func TestDefaults(t *testing.T) {
	hs := hosts("10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80")
	r, err := NewRing(hs, RingConfig{})
	if err != nil || r.Size() != 1026 { // ceil(1/3 * 1024) = 342 per host
		t.Fatalf("default ring size = %d, %v; want 1026", r.Size(), err)
	}
	g, err := NewMaglev(hs, MaglevConfig{})
	if err != nil || len(g.table) != DefaultTableSize {
		t.Fatalf("default maglev table = %d, %v", len(g.table), err)
	}
	k := []byte("user-42")
	if r.Index(k) != r.IndexHash(xxhash.Sum64(k)) || g.Index(k) != g.IndexHash(xxhash.Sum64(k)) {
		t.Fatal("Index does not hash with XXH64 seed 0")
	}
}

func TestErrors(t *testing.T) {
	hs := hosts("a:01", "b:02")
	for _, c := range []struct {
		name  string
		hosts []Host
		ring  RingConfig
		mag   MaglevConfig
		want  error
	}{
		{"no hosts", nil, RingConfig{}, MaglevConfig{}, kolco.ErrNoNodes},
		{"a key twice", hosts("a:01", "a:01"), RingConfig{}, MaglevConfig{}, kolco.ErrDuplicateNode},
		{"no key or address", []Host{{}}, RingConfig{}, MaglevConfig{}, kolco.ErrBadNodeID},
		{"weights above 2^32-1", []Host{{Key: "a", Weight: math.MaxUint32}, {Key: "b", Weight: 2}}, RingConfig{}, MaglevConfig{}, kolco.ErrBadWeight},
		{"min above max, table not prime", hs, RingConfig{MinRingSize: 20, MaxRingSize: 10}, MaglevConfig{TableSize: 8}, kolco.ErrBadConfig},
		{"max above 8M, table of 1", hs, RingConfig{MaxRingSize: DefaultMaxRingSize + 1}, MaglevConfig{TableSize: 1}, kolco.ErrBadConfig},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := NewRing(c.hosts, c.ring); !errors.Is(err, c.want) {
				t.Errorf("NewRing(%v, %+v) err = %v, want %v", c.hosts, c.ring, err, c.want)
			}
			if _, err := NewMaglev(c.hosts, c.mag); !errors.Is(err, c.want) {
				t.Errorf("NewMaglev(%v, %+v) err = %v, want %v", c.hosts, c.mag, err, c.want)
			}
		})
	}
}

func TestLocateN(t *testing.T) {
	hs := hosts("10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80", "10.0.0.4:80")
	r, _ := NewRing(hs, RingConfig{})
	g, _ := NewMaglev(hs, MaglevConfig{TableSize: 1009})
	for _, p := range []kolco.Placement{r, g} {
		t.Run(fmt.Sprintf("%T", p), func(t *testing.T) {
			for _, k := range []string{"a", "b", "\xff"} {
				first, _ := p.Locate(k)
				got, err := p.LocateN(nil, k, 9)
				if err != nil || len(got) != 4 || got[0] != *first {
					t.Fatalf("LocateN(%q) = %v, %v", k, got, err)
				}
			}
			if _, err := p.LocateN(nil, "a", 0); !errors.Is(err, kolco.ErrBadCount) {
				t.Fatalf("n=0 err = %v", err)
			}
		})
	}
	// Maglev attempt a looks up h ^ (2^64 - a), as Envoy's chooseHost does:
	// the second host is that of the first attempt landing elsewhere.
	for _, k := range []string{"a", "b", "c", "d"} {
		h := xxhash.Sum64String(k)
		got, _ := g.LocateN(nil, k, 2)
		for a := uint64(1); a < 100; a++ {
			if alt := hs[g.IndexHash(h^(^uint64(0)-a+1))].Key; alt != got[0].ID {
				if alt != got[1].ID {
					t.Fatalf("LocateN(%q) = %v, retry attempt %d picks %s", k, got, a, alt)
				}
				break
			}
		}
	}
}

func TestNoAllocs(t *testing.T) {
	if bytestr.Copies {
		t.Skip("the purego build copies keys; zero allocations are promised for the default build")
	}
	hs := hosts("10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80")
	r, _ := NewRing(hs, RingConfig{})
	g, _ := NewMaglev(hs, MaglevConfig{TableSize: 1009})
	key := strings.Repeat("long-key-", 20)
	dst := make([]kolco.Node, 0, 3)
	for _, p := range []kolco.Placement{r, g} {
		t.Run(fmt.Sprintf("%T", p), func(t *testing.T) {
			if a := testing.AllocsPerRun(100, func() { n, _ := p.Locate(key); sink += len(n.ID) }); a != 0 {
				t.Errorf("%T Locate allocates %v", p, a)
			}
			if a := testing.AllocsPerRun(100, func() { dst, _ = p.LocateN(dst[:0], key, 3) }); a != 0 {
				t.Errorf("%T LocateN allocates %v", p, a)
			}
		})
	}
}

func FuzzIndex(f *testing.F) {
	f.Add([]byte("key"), "a:1", "b:2", uint8(1), uint8(3))
	f.Add([]byte{}, "x", "\xff", uint8(0), uint8(0))
	f.Fuzz(func(t *testing.T, key []byte, a, b string, wa, wb uint8) {
		hs := []Host{{Key: a, Weight: uint32(wa % 4)}, {Key: b, Weight: uint32(wb % 4)}}
		r, err := NewRing(hs, RingConfig{MinRingSize: 16, MaxRingSize: 64})
		if err != nil {
			return
		}
		if got, want := r.Index(key), refRing(hs, 16, 64, xxhash.Sum64(key)); got != want {
			t.Fatalf("ring Index = %d, reference %d", got, want)
		}
		g, err := NewMaglev(hs, MaglevConfig{TableSize: 31})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := g.Index(key), int(refMaglev(hs, 31)[xxhash.Sum64(key)%31]); got != want {
			t.Fatalf("maglev Index = %d, reference %d", got, want)
		}
	})
}

func BenchmarkLocate(b *testing.B) {
	key := "user:12345:profile"
	for _, n := range []int{3, 30, 300} {
		hs := make([]Host, n)
		for i := range hs {
			hs[i] = Host{Addr: fmt.Sprintf("10.0.%d.%d:80", i/256, i%256), Weight: uint32(1 + i%3)}
		}
		r, _ := NewRing(hs, RingConfig{})
		g, _ := NewMaglev(hs, MaglevConfig{})
		for name, p := range map[string]kolco.Placement{"ring_hash": r, "maglev": g} {
			b.Run(fmt.Sprintf("%s/n=%d", name, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					nd, _ := p.Locate(key)
					sink += len(nd.ID)
				}
			})
		}
	}
}
