package proxy

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// loadResult counts what a load client saw.
type loadResult struct {
	ok, deadKeyErrors atomic.Int64
	mu                sync.Mutex
	liveKeyErrors     []string
	connErrors        []error
}

func (r *loadResult) fail(keys []string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.liveKeyErrors = append(r.liveKeyErrors, keys...)
	if err != nil {
		r.connErrors = append(r.connErrors, err)
	}
}

// setGet sends a set of key to "v" and a get of it, pipelined, and
// reports whether both replies were the good ones, and what they were;
// an error is a dropped connection.
type setGet func(key string) (good bool, replies string, err error)

// dialSetGet opens a client connection of proto (memcached or redis) to
// addr.
func dialSetGet(t *testing.T, proto, addr string) setGet {
	if proto == "redis" {
		c := dialRedis(t, addr)
		return func(k string) (bool, string, error) {
			c.send("SET", k, "v")
			c.send("GET", k)
			r1, err1 := c.read()
			r2, err2 := c.read()
			if err1 != nil || err2 != nil {
				return false, "", fmt.Errorf("connection dropped: %v %v", err1, err2)
			}
			return r1 == "+OK\r\n" && r2 == "$1\r\nv\r\n", fmt.Sprintf("%q %q", r1, r2), nil
		}
	}
	c := dial(t, addr)
	return func(k string) (bool, string, error) {
		if _, err := fmt.Fprintf(c.conn, "set %s 0 0 1\r\nv\r\nget %s\r\n", k, k); err != nil {
			return false, "", err
		}
		r1, _, err1 := c.rr.Read(nil, memcache.CmdSet, nil)
		r2, _, err2 := c.rr.Read(nil, memcache.CmdGet, nil)
		if err1 != nil || err2 != nil {
			return false, "", fmt.Errorf("connection dropped: %v %v", err1, err2)
		}
		return strings.HasPrefix(string(r1), "STORED") && strings.HasPrefix(string(r2), "VALUE"), fmt.Sprintf("%q %q", r1, r2), nil
	}
}

// runLoad runs clients of proto that set and get keys until stop is
// closed (or 100000 rounds each). An error for a key whose owner is in
// dead is expected; for any other key it is recorded as a failure, as is
// a dropped connection.
func runLoad(t *testing.T, proto, addr string, clients int, keys []string, owner map[string]string,
	dead *atomic.Value, stop chan struct{}, res *loadResult) *sync.WaitGroup {
	var wg sync.WaitGroup
	for ci := range clients {
		round := dialSetGet(t, proto, addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100000; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := keys[(i*7+ci*13)%len(keys)]
				deadNow := dead.Load().(string)
				good, replies, err := round(k)
				switch {
				case err != nil:
					res.fail(nil, err)
					return
				case good:
					res.ok.Add(1)
				case owner[k] == deadNow || owner[k] == dead.Load().(string):
					res.deadKeyErrors.Add(1)
				default:
					res.fail([]string{fmt.Sprintf("%s (owner %s): %s", k, owner[k], replies)}, nil)
				}
			}
		}()
	}
	return &wg
}

// faultServers are three real servers of one protocol, one of which a
// test kills and starts again on its port.
type faultServers struct {
	addrs []string
	kill  func(i int)
	start func(i int)
}

func startFaultServers(t *testing.T, proto string) *faultServers {
	f := &faultServers{}
	if proto == "redis" {
		rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
		for _, r := range rs {
			f.addrs = append(f.addrs, r.addr)
		}
		f.kill = func(i int) { rs[i].stop() }
		f.start = func(i int) { rs[i].start(t) }
		return f
	}
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0)}
	for _, m := range ms {
		f.addrs = append(f.addrs, m.addr)
	}
	f.kill = func(i int) { ms[i].stop() }
	f.start = func(i int) { startMemcached(t, ms[i].port) }
	return f
}

// faultPoolYAML is a pool of proto over addrs under policy, marking a
// server down at its first failure and probing it every 20 ms. The
// timeouts are generous: a killed server is noticed by its closed
// connections at once, and a loaded test machine must not make a live
// server look dead.
func faultPoolYAML(proto, policy string, addrs []string) string {
	y := fmt.Sprintf("p:\n  listen: 127.0.0.1:0\n  hash: md5\n  auto_eject_hosts: %v\n  ejection: %s\n  timeout: 5000\n"+
		"  server_failure_limit: 1\n  server_retry_timeout: 600000\n  health_check: {interval: 20, timeout: 1000}\n",
		policy != EjectNone, policy)
	if proto == "redis" {
		y += "  redis: true\n"
	}
	y += "  servers:\n"
	for i, a := range addrs {
		y += fmt.Sprintf("   - %s:1 s%d\n", a, i)
	}
	return y
}

// TestFaultEjectAndRestore kills one of three servers under load, for
// memcached and Redis and each ejection policy: only its keys fail -
// until it is ejected under rehash, until it is back under fail-fast and
// none, where the placement keeps it - the probe restores it when it
// comes back on the same port, and no client connection is dropped.
func TestFaultEjectAndRestore(t *testing.T) {
	t.Parallel()
	for _, proto := range []string{"memcached", "redis"} {
		for _, policy := range []string{EjectRehash, EjectFailFast, EjectNone} {
			t.Run(proto+"/"+policy, func(t *testing.T) {
				t.Parallel()
				faultEjectAndRestore(t, proto, policy)
			})
		}
	}
}

func faultEjectAndRestore(t *testing.T, proto, policy string) {
	f := startFaultServers(t, proto)
	s := startProxy(t, faultPoolYAML(proto, policy, f.addrs))
	keys := make([]string, 300)
	owner := map[string]string{}
	for i := range keys {
		keys[i] = fmt.Sprintf("fault:%d", i)
		owner[keys[i]] = ownerOf(s.testPool("p"), keys[i])
	}
	victim := f.addrs[1]
	var dead atomic.Value
	dead.Store("")
	var res loadResult
	stop := make(chan struct{})
	wg := runLoad(t, proto, s.Addr("p").String(), 4, keys, owner, &dead, stop, &res)

	eventually(t, "load to start", func() bool { return res.ok.Load() > 500 })
	dead.Store(victim)
	f.kill(1)
	b := s.testPool("p").backends[1]
	// Under rehash they fail until it is ejected, at the first.
	failures := int64(50)
	if policy == EjectRehash {
		failures = 1
	}
	eventually(t, "the victim's keys to fail", func() bool { return res.deadKeyErrors.Load() >= failures })
	if policy != EjectNone {
		eventually(t, "the server to be marked down", func() bool { return b.health.isDown() })
		// Under fail-fast the down server keeps its place; stats still
		// count it out.
		if proto == "memcached" {
			if st := dial(t, s.Addr("p").String()).do("stats\r\n"); !strings.Contains(st, "STAT servers_live 2\r\n") {
				t.Fatalf("one of three servers down; stats say:\n%s", st)
			}
		}
	}
	switch policy {
	case EjectRehash:
		eventually(t, "ejection", func() bool { return liveCount(s) == 2 })
		// After ejection every key works again, the victim's on other servers.
		base := res.ok.Load()
		eventually(t, "load after ejection", func() bool { return res.ok.Load() > base+1000 })
	case EjectFailFast:
		base := res.deadKeyErrors.Load()
		eventually(t, "victim's keys failing fast", func() bool { return res.deadKeyErrors.Load() > base+100 })
		if liveCount(s) != 3 {
			t.Fatalf("fail-fast changed the placement: %d live", liveCount(s))
		}
	case EjectNone:
		if b.health.isDown() {
			t.Fatal("ejection none marked the server down")
		}
	}
	f.start(1)
	eventually(t, "restore", func() bool { return !b.health.isDown() && liveCount(s) == 3 })
	dead.Store("")
	base := res.ok.Load()
	eventually(t, "load after restore", func() bool { return res.ok.Load() > base+500 })
	close(stop)
	wg.Wait()
	if len(res.connErrors) > 0 || len(res.liveKeyErrors) > 0 {
		t.Fatalf("connections dropped: %v\nlive keys failed (%d): %q", res.connErrors, len(res.liveKeyErrors), res.liveKeyErrors[:min(5, len(res.liveKeyErrors))])
	}
	if policy != EjectNone {
		// A server's series are labelled with its name and address.
		if n := gathered(t, s, "kolco_proxy_ejections_total", "s1"); n < 1 {
			t.Fatalf("ejections metric for %s = %v", victim, n)
		}
		if n := gathered(t, s, "kolco_proxy_ejections_total", "s0"); n != 0 {
			t.Fatalf("ejections metric for a healthy server = %v", n)
		}
	}
	t.Logf("%s: %d good rounds, %d failures all on the victim's keys", policy, res.ok.Load(), res.deadKeyErrors.Load())
}
