package proxy

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/sim/workload"
)

// origin is the "database" behind the cache: a loopback server that
// answers "<key>\n" with the key's value and counts what it serves.
type origin struct {
	addr  string
	fills atomic.Int64
}

func startOrigin(t *testing.T) *origin {
	o := &origin{}
	o.addr = fakeServer(t, func(c net.Conn) {
		r := bufio.NewReader(c)
		for {
			key, err := r.ReadString('\n')
			if err != nil {
				return
			}
			o.fills.Add(1)
			if _, err := fmt.Fprintf(c, "value-of-%s", key); err != nil {
				return
			}
		}
	})
	return o
}

// workloadSize is the key universe and the requests per phase: short
// under go test, long with KOLCO_WARM_LONG=1.
func workloadSize() (keys, requests int) {
	if os.Getenv("KOLCO_WARM_LONG") == "1" {
		return 100_000, 200_000
	}
	return 20_000, 12_000
}

// phase is the outcome of a run of requests: its misses (fills at the
// origin), and those of its first tenth of requests, the head.
type phase struct {
	requests, misses int
	headMisses       int
	elapsed          time.Duration
}

func (p phase) missRate() float64 { return 100 * float64(p.misses) / float64(p.requests) }
func (p phase) headRate() float64 {
	return 100 * float64(p.headMisses) / float64(p.requests/10)
}
func (p phase) perSecond() float64 {
	return float64(p.requests) / p.elapsed.Seconds()
}

// cacheClient is one cache-aside client: get through the proxy; on a
// miss, read the origin and set the value.
type cacheClient struct {
	cache  *mc
	origin *bufio.ReadWriter
}

func (c *cacheClient) request(key string) (hit bool) {
	if getValue(c.cache, key) != "" {
		return true
	}
	fmt.Fprintf(c.origin, "%s\n", key)
	if err := c.origin.Flush(); err != nil {
		c.cache.t.Fatal(err)
	}
	v, err := c.origin.ReadString('\n')
	if err != nil {
		c.cache.t.Fatal(err)
	}
	setValue(c.cache, key, strings.TrimSuffix(v, "\n"), 0, 0)
	return false
}

// runPhase serves requests from stream (key ranks), every 20th a key never
// asked before (the long tail: 5% of requests miss in a steady cache),
// with clients sharing the requests, and counts the fills at o.
func runPhase(t *testing.T, clients []*cacheClient, o *origin, stream []int32, tag string) phase {
	before := o.fills.Load()
	var head atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for g, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < len(stream); i += len(clients) {
				key := fmt.Sprintf("z:%d", stream[i])
				if i%20 == 19 {
					key = fmt.Sprintf("new:%s:%d", tag, i)
				}
				if !c.request(key) && i < len(stream)/10 {
					head.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return phase{requests: len(stream), misses: int(o.fills.Load() - before), headMisses: int(head.Load()), elapsed: time.Since(start)}
}

// workloadRun fills the cache with every key, serves a steady phase, applies
// the change from servers before to after, and serves the same number of
// requests through it.
func workloadRun(t *testing.T, settings string, before, after []int) (steady, change phase, moved float64) {
	c := startCluster(t, 4)
	o := startOrigin(t)
	s := startProxy(t, c.yaml(settings, before...))
	nkeys, nreq := workloadSize()
	fill := dial(t, s.Addr("p").String())
	var b strings.Builder
	for k := range nkeys {
		v := fmt.Sprintf("value-of-z:%d", k)
		fmt.Fprintf(&b, "set z:%d 0 0 %d noreply\r\n%s\r\n", k, len(v), v)
	}
	if reply := fill.do(b.String() + "mn\r\n"); reply != "MN\r\n" {
		t.Fatalf("filling the cache: %q", reply)
	}
	var clients []*cacheClient
	for range 4 {
		conn, err := net.Dial("tcp", o.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		clients = append(clients, &cacheClient{cache: dial(t, s.Addr("p").String()),
			origin: bufio.NewReadWriter(bufio.NewReader(conn), bufio.NewWriter(conn))})
	}
	stream := workload.Stream(workload.ZipfWeights(nkeys, 0.99), 2*nreq, 7)
	steady = runPhase(t, clients, o, stream[:nreq], "steady")
	keys := make([]string, nkeys)
	for k := range keys {
		keys[k] = fmt.Sprintf("z:%d", k)
	}
	was := routeNames(s.testPool("p"), keys)
	reload(t, s, c.yaml(settings, after...))
	now := routeNames(s.testPool("p"), keys)
	w := workload.ZipfWeights(nkeys, 0.99)
	for k := range keys {
		if was[k] != now[k] {
			moved += w[k]
		}
	}
	change = runPhase(t, clients, o, stream[nreq:], "change")
	return steady, change, 100 * moved * 19 / 20
}

// TestWarmChangeKeepsMissRate: a cache-aside workload (Zipf(0.99) key
// popularity, 5% of requests for keys never asked before, so a steady
// cache hits 95%) through a change of a ring of memcached servers, a
// server added and one removed. Cold, the requests right after the change
// miss on the keys it moved; warm, the miss rate stays within one point
// of steady. Throughput through the change is logged beside steady's
// (not checked: the machine is shared).
func TestWarmChangeKeepsMissRate(t *testing.T) {
	changes := []struct {
		name          string
		before, after []int
	}{
		{"add a server", []int{0, 1, 2}, []int{0, 1, 2, 3}},
		{"remove a server", []int{0, 1, 2, 3}, []int{0, 1, 2}},
	}
	t.Parallel()
	nkeys, nreq := workloadSize()
	var mu sync.Mutex
	var report []string
	t.Cleanup(func() {
		t.Logf("%d keys, %d requests per phase, 4 clients:\n%s", nkeys, nreq, strings.Join(report, "\n"))
	})
	for _, ch := range changes {
		for _, mode := range []string{"cold", "warm"} {
			t.Run(ch.name+"/"+mode, func(t *testing.T) {
				t.Parallel() // misses are counted, not timed
				settings := "  distribution: ring\n  warm: {enabled: " + fmt.Sprint(mode == "warm") + "}\n"
				steady, change, moved := workloadRun(t, settings, ch.before, ch.after)
				if steady.missRate() < 4.5 || steady.missRate() > 5.5 {
					t.Fatalf("steady miss rate %.2f%%, not the workload's 5%%", steady.missRate())
				}
				extra := change.missRate() - steady.missRate()
				if mode == "warm" && extra > 1 {
					t.Errorf("warm: %.2f%% of requests missed through the change, %.2f%% steady", change.missRate(), steady.missRate())
				}
				if mode == "cold" && extra < 1 {
					t.Errorf("cold: %.2f%% missed through the change, %.2f%% steady: the change moved nothing the test asks for",
						change.missRate(), steady.missRate())
				}
				mu.Lock()
				defer mu.Unlock()
				report = append(report, fmt.Sprintf("%-15s %s: misses %5.2f%% steady, %5.2f%% through the change, %5.2f%% in its first tenth (requests to moved keys %4.1f%%); %6.0f req/s steady, %6.0f through the change",
					ch.name, mode, steady.missRate(), change.missRate(), change.headRate(), moved, steady.perSecond(), change.perSecond()))
			})
		}
	}
}
