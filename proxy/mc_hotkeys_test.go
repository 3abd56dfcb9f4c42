package proxy

import (
	"bufio"
	"cmp"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/proxy/memcache"
	"github.com/kolco-dev/kolco/sim/trace"
)

// TestHotKeysConfig: the hot-key cache's settings are checked, and the
// combinations it cannot serve rightly are refused, each naming the
// setting at fault.
func TestHotKeysConfig(t *testing.T) {
	const on = "  traffic: {enabled: true}\n"
	for _, tc := range []struct {
		name, extra, key string // key "" for a valid configuration
	}{
		{"off", "", ""},
		{"off with settings", "  hot_keys: {size: 8, staleness: 5}\n", ""},
		{"memcached", on + "  hot_keys: {enabled: true}\n", ""},
		{"memcached with every setting", "  traffic: {enabled: true, top_keys: 64}\n  hot_keys: {enabled: true, size: 64, staleness: 1000}\n", ""},
		{"redis", "  redis: true\n" + on + "  hot_keys: {enabled: true}\n", ""},
		{"redis store", "  redis: true\n  store: {enabled: true}\n" + on + "  hot_keys: {enabled: true}\n", ""},
		{"warm", "  distribution: ring\n  warm: {enabled: true}\n" + on + "  hot_keys: {enabled: true}\n", ""},
		{"without the traffic sample", "  hot_keys: {enabled: true}\n", "hot_keys.enabled"},
		{"size over top_keys", on + "  hot_keys: {enabled: true, size: 33}\n", "hot_keys.size"},
		{"size negative", on + "  hot_keys: {enabled: true, size: -1}\n", "hot_keys.size"},
		{"staleness negative", on + "  hot_keys: {enabled: true, staleness: -1}\n", "hot_keys.staleness"},
		{"staleness over a minute", on + "  hot_keys: {enabled: true, staleness: 60001}\n", "hot_keys.staleness"},
		{"redis with staleness", "  redis: true\n" + on + "  hot_keys: {enabled: true, staleness: 100}\n", "hot_keys.staleness"},
		{"replicas", "  distribution: ring\n  replicas: 2\n" + on + "  hot_keys: {enabled: true}\n", "traffic.enabled"},
		{"random", "  distribution: random\n" + on + "  hot_keys: {enabled: true}\n", "traffic.enabled"},
		{"replica reads", "  redis: true\n  membership: {sentinel: {sentinels: ['127.0.0.1:26379']}}\n  replica_reads: {enabled: true}\n" + on + "  hot_keys: {enabled: true}\n", "hot_keys.enabled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			yaml := "p:\n  listen: 127.0.0.1:0\n" + tc.extra + "  servers:\n   - 127.0.0.1:11211:1 a\n   - 127.0.0.1:11212:1 b\n"
			wantConfigKey(t, yaml, tc.key)
		})
	}
}

// TestHotKeysCheckExplains: kolco proxy --check says what a pool's cache
// does, with its defaults.
func TestHotKeysCheckExplains(t *testing.T) {
	for _, tc := range []struct{ extra, want string }{
		{"  traffic: {enabled: true}\n  hot_keys: {enabled: true}\n", "  hot keys: gets of the 32 hottest keys answered by the proxy from values at most 100 ms old"},
		{"  redis: true\n  traffic: {enabled: true, top_keys: 8}\n  hot_keys: {enabled: true}\n", "  hot keys: GETs of the 8 hottest keys answered by the proxy, invalidated by the servers' CLIENT TRACKING"},
	} {
		wantExplained(t, tc.extra, tc.want)
	}
}

// TestHotKeysStaleness: a value is answered until it is staleness old,
// and not after; nor once invalidated, under another placement or from
// another server.
func TestHotKeysStaleness(t *testing.T) {
	const staleness = int64(100 * time.Millisecond)
	c := &hotCache{staleness: staleness}
	c.set.Store(&hotSet{table: make([]int32, 1)})
	e := &hotEntry{key: []byte("k")}
	pl, other := &placement{}, &placement{}
	b, ob := &backend{}, &backend{}
	c.store(hotTicket{e: e, place: pl, from: b, born: 1000}, []byte("VALUE k 0 1\r\nv\r\nEND\r\n"))
	for _, tc := range []struct {
		name string
		pl   *placement
		from *backend
		now  int64
		want bool
	}{
		{"fresh", pl, b, 1000, true},
		{"staleness old", pl, b, 1000 + staleness, true},
		{"older", pl, b, 1000 + staleness + 1, false},
		{"another placement", other, b, 1000, false},
		{"another server", pl, ob, 1000, false},
	} {
		if got := c.answer(e, tc.pl, tc.from, tc.now) != nil; got != tc.want {
			t.Errorf("%s: answered %v, want %v", tc.name, got, tc.want)
		}
	}
	// A read sent before an invalidation stores nothing answered.
	late := hotTicket{e: e, gen: e.gen.Load(), place: pl, from: b, born: 2000}
	e.gen.Add(1) // as invalidate does to an entry of the set
	c.store(late, []byte("VALUE k 0 1\r\no\r\nEND\r\n"))
	if c.answer(e, pl, b, 2000) != nil {
		t.Error("a value read before an invalidation was answered")
	}
	c.store(hotTicket{e: e, gen: e.gen.Load(), place: pl, from: b, born: 3000}, []byte("END\r\n"))
	c.invalidateAll()
	if c.answer(e, pl, b, 3000) != nil {
		t.Error("a value was answered after every value was dropped")
	}
}

// TestHotKeysRefreshAhead: past half its staleness a value is still
// answered, but one read - the first - is sent to refresh it, and no
// other until that one ends; a refresh that fails lets the next claim it.
func TestHotKeysRefreshAhead(t *testing.T) {
	const staleness = int64(100 * time.Millisecond)
	c := &hotCache{staleness: staleness, size: 1}
	key := []byte("k")
	e := &hotEntry{key: key, hash: trace.SampleHashBytes(key)}
	s := &hotSet{entries: []*hotEntry{e}, table: make([]int32, 2), mask: 1}
	s.table[e.hash&s.mask] = 1
	c.set.Store(s)
	c.due.Store(1 << 62) // no rebuild from a sample
	pl, b := &placement{}, &backend{}
	c.store(hotTicket{e: e, place: pl, from: b, born: 0}, []byte("END\r\n"))
	read := func(now int64) (bool, hotTicket) {
		v, tk := c.read(key, pl, b, now)
		return v != nil, tk
	}
	if hit, tk := read(staleness / 2); !hit || tk.e != nil {
		t.Fatalf("at half the staleness: hit %v, ticket %v", hit, tk.e != nil)
	}
	hit, first := read(staleness/2 + 1)
	if hit || !first.refresh {
		t.Fatalf("past half the staleness: the first read was a hit %v, a refresh %v; want it sent to refresh", hit, first.refresh)
	}
	if hit, tk := read(staleness/2 + 2); !hit || tk.e != nil {
		t.Errorf("while a refresh is out: a read was not answered from the value")
	}
	c.store(first, nil) // the refresh failed
	if _, tk := read(staleness/2 + 3); !tk.refresh {
		t.Errorf("after a failed refresh: the next read did not claim the refresh")
	}
}

// TestHotKeysMemcached: with the cache on, a hot key's get is answered by
// the proxy (the server counts no get of it) with the value it read, even
// after another client changed it on the server, within the staleness;
// a set, a delete and a flush_all through the proxy are seen at once.
// /v1/pools, the status page and the metrics show the cache's hits.
func TestHotKeysMemcached(t *testing.T) {
	t.Parallel()
	m := startMemcached(t, 0)
	s := startProxy(t, "kolco:\n  admin_listen: \":0\"\n"+poolYAML("  flush_all: broadcast\n  traffic: {enabled: true, top_keys: 8}\n  hot_keys: {enabled: true, staleness: 60000}\n", m))
	c := dial(t, s.Addr("p").String())
	d := dialDirect(t, m)
	p := s.testPool("p")
	setValue(c, "hot", "v1", 0, 0)
	eventually(t, "the cache to answer the hot key", func() bool {
		if v := getValue(c, "hot"); v != "v1" {
			t.Fatalf("got %q, want v1", v)
		}
		return p.hot.hits.Load() > 0
	})
	d.set("hot", "v2") // around the proxy: seen within the staleness
	gets := serverGets(t, m)
	for range 10 {
		if v := getValue(c, "hot"); v != "v1" {
			t.Fatalf("got %q from the cache, want v1", v)
		}
	}
	if n := serverGets(t, m) - gets; n != 0 {
		t.Errorf("the server counted %d gets of the cached key, want 0", n)
	}
	setValue(c, "hot", "v3", 0, 0)
	if v := getValue(c, "hot"); v != "v3" {
		t.Errorf("after a set through the proxy: got %q, want v3", v)
	}
	if r := c.do("delete hot\r\n"); r != "DELETED\r\n" {
		t.Fatalf("delete: %q", r)
	}
	if v := getValue(c, "hot"); v != "" {
		t.Errorf("after a delete through the proxy: got %q, want a miss", v)
	}
	setValue(c, "hot", "v4", 0, 0)
	getValue(c, "hot")
	d.set("hot", "v5")
	if r := c.do("flush_all\r\n"); r != "OK\r\n" {
		t.Fatalf("flush_all: %q", r)
	}
	if v := getValue(c, "hot"); v != "" {
		t.Errorf("after flush_all through the proxy: got %q, want a miss", v)
	}
	var st PoolStatus
	adminGet(t, s, "/v1/pools/p", "", &st)
	if h := st.Traffic.HotCache; h == nil || h.Hits < 11 || !slices.Contains(h.Keys, "hot") || h.Invalidations == 0 {
		t.Errorf("/v1/pools/p: hot cache %+v, want the key hot, at least 11 hits and invalidations", h)
	}
	admin := "http://" + s.AdminAddr().String()
	if page := httpBody(t, admin+"/status"); !strings.Contains(page, `<p class="hot-cache">`) {
		t.Error("the status page does not show the hot-key cache")
	}
	if metrics := httpBody(t, admin+"/metrics"); !strings.Contains(metrics, `kolco_proxy_hot_keys_total{kind="hits",pool="p"}`) {
		t.Error("the metrics lack the hot-key cache's hits")
	}
}

// TestHotKeysMemcachedChange: a change that gives a cached key another
// server reads it there, not from the cache of the old one.
func TestHotKeysMemcachedChange(t *testing.T) {
	t.Parallel()
	cl := startCluster(t, 2)
	settings := "  traffic: {enabled: true, top_keys: 8}\n  hot_keys: {enabled: true, staleness: 60000}\n"
	s := startProxy(t, cl.yaml(settings, 0))
	c := dial(t, s.Addr("p").String())
	setValue(c, "hot", "old", 0, 0)
	eventually(t, "the cache to answer the hot key", func() bool {
		getValue(c, "hot")
		return s.testPool("p").hot.hits.Load() > 0
	})
	dialDirect(t, cl.ms[1]).set("hot", "new")
	reload(t, s, cl.yaml(settings, 1))
	if v := getValue(c, "hot"); v != "new" {
		t.Errorf("after the change: got %q, want the new server's", v)
	}
}

// TestHotKeysBalanceZipf: under a Zipf 1.2 law of gets over 100 000 keys
// through a pool of ten real memcached servers (jump: each server about a
// tenth of the keys), the busiest server gets more than 1.1 times the
// servers' mean of the requests with the cache off, and within 1.1 times
// it with the cache on (the 1024 hottest keys, values a second stale at
// most); requests as the servers count them (cmd_get). With the cache off
// a third as many gets show the hot server: its share is the law's, 2.3
// times the mean in 100 000 gets as in 300 000.
func TestHotKeysBalanceZipf(t *testing.T) {
	t.Parallel() // the servers' gets are counted, not timed
	const servers, keys, s, n, nOff = 10, 100_000, 1.2, 300_000, 100_000
	cl := startCluster(t, servers)
	all := make([]int, servers)
	for i := range all {
		all[i] = i
	}
	base := "  distribution: jump\n  traffic: {enabled: true, top_keys: 1024}\n"
	srv := startProxy(t, cl.yaml(base, all...))
	addr := srv.Addr("p").String()
	off := serverLoad(t, cl.ms, func() { zipfGets(t, addr, keys, s, nOff, 1) })
	reload(t, srv, cl.yaml(base+"  hot_keys: {enabled: true, size: 1024, staleness: 1000}\n", all...))
	p := srv.testPool("p")
	eventually(t, "the cache to follow the hottest keys", func() bool {
		zipfGets(t, addr, keys, s, 5000, 2)
		return len(p.hot.set.Load().entries) == 1024
	})
	// The cache-on share is measured three times and the median judged:
	// which keys the cache holds at each moment moves the busiest server
	// between 1.04 and 1.11 times the mean from run to run.
	var ons []load
	for run := range 3 {
		hits := p.hot.hits.Load()
		on := serverLoad(t, cl.ms, func() { zipfGets(t, addr, keys, s, n, uint64(3+run)) })
		t.Logf("cache on:  busiest server %.3f times the mean, %d gets reached the servers of %d (%d answered by the proxy)", on.peak, on.total, n, p.hot.hits.Load()-hits)
		ons = append(ons, on)
	}
	slices.SortFunc(ons, func(a, b load) int { return cmp.Compare(a.peak, b.peak) })
	on := ons[1]
	t.Logf("cache off: busiest server %.3f times the mean, %d gets reached the servers of %d", off.peak, off.total, nOff)
	if off.peak <= 1.1 {
		t.Errorf("cache off: the busiest server had %.3f times the mean: the workload shows no hot server to spread", off.peak)
	}
	if on.peak > 1.1 {
		t.Errorf("cache on: the busiest server had %.3f times the mean (the median of three), want at most 1.1", on.peak)
	}
}

// load is what the servers counted of a workload: the requests in all,
// and the busiest server's over the mean.
type load struct {
	total uint64
	peak  float64
}

// serverLoad runs work and returns the gets each server counted meanwhile.
func serverLoad(t *testing.T, ms []*memcached, work func()) load {
	before := make([]uint64, len(ms))
	for i, m := range ms {
		before[i] = serverGets(t, m)
	}
	work()
	var l load
	var peak uint64
	for i, m := range ms {
		d := serverGets(t, m) - before[i]
		l.total += d
		peak = max(peak, d)
	}
	l.peak = float64(peak) * float64(len(ms)) / float64(l.total)
	return l
}

// serverGets returns the gets memcached m has counted (cmd_get).
func serverGets(t *testing.T, m *memcached) uint64 {
	t.Helper()
	conn, err := net.DialTimeout("tcp", m.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := conn.Write([]byte("stats\r\n")); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	var gets uint64
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := strings.CutPrefix(line, "STAT cmd_get "); ok {
			gets, _ = strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		}
		if line == "END\r\n" {
			return gets
		}
	}
}

// zipfGets sends n gets of keys drawn by a Zipf law of exponent s over
// keys keys through the proxy at addr, from four clients, each pipelining
// its gets a hundred at a time.
func zipfGets(t *testing.T, addr string, keys int, s float64, n int, seed uint64) {
	const clients, batch = 4, 100
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range clients {
		wg.Go(func() {
			conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(5 * time.Minute))
			rr := memcache.NewReplyReader(bufio.NewReader(conn), 0)
			z := rand.NewZipf(rand.New(rand.NewPCG(seed, uint64(i))), s, 1, uint64(keys-1))
			var req, reply []byte
			for sent := 0; sent < n/clients; sent += batch {
				req = req[:0]
				for range batch {
					req = fmt.Appendf(req, "get key:%d\r\n", z.Uint64())
				}
				if _, err := conn.Write(req); err != nil {
					errs <- err
					return
				}
				for range batch {
					if reply, _, err = rr.Read(reply[:0], memcache.CmdGet, nil); err != nil {
						errs <- err
						return
					}
					if memcache.IsErrorReply(reply) {
						errs <- fmt.Errorf("get: %q", reply)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
