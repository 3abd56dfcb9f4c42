package mrc

import (
	"bufio"
	"container/list"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
)

// TestSlabClassesAreMemcacheds compares the chunk sizes with those the
// installed memcached prints with -vv, and each class's items a page with
// its "perslab".
func TestSlabClassesAreMemcacheds(t *testing.T) {
	bin := realprog.Binary(t, "memcached", "memcached")
	args := []string{"-vv", "-l", "127.0.0.1", "-p", "0", "-U", "0", "-m", "64"}
	if os.Geteuid() == 0 {
		args = append(args, "-u", "root")
	}
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	stop := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() }) // a memcached that prints fewer classes ends the read
	defer stop.Stop()
	re := regexp.MustCompile(`slab class +(\d+): chunk size +(\d+) perslab +(\d+)`)
	sc := bufio.NewScanner(stderr)
	n := 0
	for n < len(slabClasses) && sc.Scan() {
		m := re.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		size, _ := strconv.ParseInt(m[2], 10, 64)
		perSlab, _ := strconv.ParseInt(m[3], 10, 64)
		if size != slabClasses[n] || perSlab != pageSize/size {
			t.Errorf("class %s: memcached %d bytes, %d a page; kolco %d, %d", m[1], size, perSlab, slabClasses[n], pageSize/slabClasses[n])
		}
		n++
	}
	if n != len(slabClasses) {
		t.Errorf("memcached printed %d classes, kolco has %d", n, len(slabClasses))
	}
}

// TestMemcachedFootprint: a key of 11 bytes and a value of 100 make an
// item of 170 bytes (memcached's "bytes" stat) in a chunk of 192, 5461 a
// page; memcached -m 2 held 10 922 such items, 2 MiB over the footprint.
func TestMemcachedFootprint(t *testing.T) {
	f := MemcachedFootprint(11, 100)
	if got := math.Floor(2 * pageSize / f); got != 10922 {
		t.Errorf("2 MiB holds %v items of %v bytes, memcached held 10922", got, f)
	}
	if f := MemcachedFootprint(10, 1<<20); f != 3*chunkMax {
		t.Errorf("a 1 MiB value: %v bytes, want three half-page chunks", f)
	}
}

// lruExact replays refs on an LRU cache of capacity bytes, every request
// bringing its key to the top, and returns the reads that miss.
func lruExact(refs []Ref, capacity float64) int {
	l := list.New()
	at := map[int32]*list.Element{}
	used, misses := 0.0, 0
	for _, r := range refs {
		if e, ok := at[r.Key]; ok {
			used -= e.Value.(Ref).Size
			l.Remove(e)
			delete(at, r.Key)
		} else if r.Op == Get {
			misses++
		}
		at[r.Key] = l.PushFront(r)
		used += r.Size
		for used > capacity {
			b := l.Back()
			used -= b.Value.(Ref).Size
			delete(at, b.Value.(Ref).Key)
			l.Remove(b)
		}
	}
	return misses
}

// zipfRefs returns n requests over keys of Zipf popularity, each key of a
// size of its own between 100 and 1000 bytes, a read in nine of ten.
func zipfRefs(n, keys int, s float64, seed uint64) []Ref {
	rng := rand.New(rand.NewPCG(seed, 1))
	z := rand.NewZipf(rng, s, 1, uint64(keys-1))
	out := make([]Ref, n)
	for i := range out {
		k := int32(z.Uint64())
		op := Get
		if rng.IntN(10) == 0 {
			op = Set
		}
		out[i] = Ref{Key: k, Op: op, Size: float64(100 + (uint32(k)*2654435761)%900)}
	}
	return out
}

// TestLRUIsExactUnsampled: at rate 1 the reuse distances give, at every
// size, exactly the misses of an LRU cache replayed request by request.
func TestLRUIsExactUnsampled(t *testing.T) {
	refs := zipfRefs(50_000, 5_000, 1.1, 1)
	sizes := []float64{0, 1000, 50_000, 300_000, 1e6, 3e6, 1e9}
	got, err := Curve(Stream{Refs: refs, Rate: 1}, LRU, sizes)
	if err != nil {
		t.Fatal(err)
	}
	gets := 0
	for _, r := range refs {
		if r.Op == Get {
			gets++
		}
	}
	for i, c := range sizes {
		if want := float64(lruExact(refs, c)) / float64(gets); got[i] != want {
			t.Errorf("%v bytes: %v, an LRU cache missed %v", c, got[i], want)
		}
	}
}

// TestCurveRefuses: rates outside (0, 1], items of no size, negative
// caches wrap ErrBadConfig.
func TestCurveRefuses(t *testing.T) {
	ok := []Ref{{Key: 1, Op: Get, Size: 10}}
	for _, c := range []struct {
		name  string
		s     Stream
		sizes []float64
	}{
		{"rate 0", Stream{Refs: ok}, []float64{1}},
		{"rate 2", Stream{Refs: ok, Rate: 2}, []float64{1}},
		{"size 0", Stream{Refs: []Ref{{Op: Get}}, Rate: 1}, []float64{1}},
		{"NaN size", Stream{Refs: []Ref{{Op: Get, Size: math.NaN()}}, Rate: 1}, []float64{1}},
		{"negative cache", Stream{Refs: ok, Rate: 1}, []float64{-1}},
		{"NaN gets", Stream{Refs: ok, Rate: 1, Gets: math.NaN()}, []float64{1}},
	} {
		for _, p := range []Policy{LRU, Memcached} {
			t.Run(fmt.Sprint(c.name, "/", p), func(t *testing.T) {
				if _, err := Curve(c.s, p, c.sizes); !errors.Is(err, ErrBadConfig) {
					t.Errorf("%v, want ErrBadConfig", err)
				}
			})
		}
	}
}
