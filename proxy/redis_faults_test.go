package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// runRedisLoad runs clients that SET and GET keys, pipelined in pairs, until
// stop is closed (or 100000 rounds each). An error reply for a key whose
// owner is dead is expected; for any other key it is recorded as a
// failure, as is a dropped connection.
func runRedisLoad(t *testing.T, addr string, clients int, keys []string, owner map[string]string,
	dead *atomic.Value, stop chan struct{}, res *loadResult) *sync.WaitGroup {
	var wg sync.WaitGroup
	for ci := range clients {
		c := dialRedis(t, addr)
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
				c.send("SET", k, "v")
				c.send("GET", k)
				r1, err1 := c.read()
				r2, err2 := c.read()
				if err1 != nil || err2 != nil {
					res.fail(nil, fmt.Errorf("connection dropped: %v %v", err1, err2))
					return
				}
				switch {
				case r1 == "+OK\r\n" && r2 == "$1\r\nv\r\n":
					res.ok.Add(1)
				case owner[k] == deadNow || owner[k] == dead.Load().(string):
					res.deadKeyErrors.Add(1)
				default:
					res.fail([]string{fmt.Sprintf("%s (owner %s): %q %q", k, owner[k], r1, r2)}, nil)
				}
			}
		}()
	}
	return &wg
}

// TestRedisFaultEjectAndRestore kills one of three redis-servers under
// load: only its keys fail - until it is ejected under rehash, until it
// is back under fail-fast and none - the probe (PING) restores it when it
// comes back on the same port, and no client connection is dropped.
func TestRedisFaultEjectAndRestore(t *testing.T) {
	t.Parallel()
	for _, policy := range []string{EjectRehash, EjectFailFast, EjectNone} {
		t.Run(policy, func(t *testing.T) {
			rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
			s := startProxy(t, redisPoolYAML(fmt.Sprintf(`  hash: md5
  auto_eject_hosts: %v
  ejection: %s
  timeout: 5000
  server_failure_limit: 1
  server_retry_timeout: 600000
  health_check: {interval: 20, timeout: 1000}
`, policy != EjectNone, policy), rs...))
			keys := make([]string, 300)
			owner := map[string]string{}
			for i := range keys {
				keys[i] = fmt.Sprintf("fault:%d", i)
				owner[keys[i]] = ownerOf(s.testPool("p"), keys[i])
			}
			victim := rs[1]
			var dead atomic.Value
			dead.Store("")
			var res loadResult
			stop := make(chan struct{})
			wg := runRedisLoad(t, s.Addr("p").String(), 4, keys, owner, &dead, stop, &res)

			eventually(t, "load to start", func() bool { return res.ok.Load() > 500 })
			dead.Store(victim.addr)
			victim.stop()
			b := s.testPool("p").backends[1]
			// Under rehash they fail until it is ejected, at the first.
			failures := int64(50)
			if policy == EjectRehash {
				failures = 1
			}
			eventually(t, "the victim's keys to fail", func() bool { return res.deadKeyErrors.Load() >= failures })
			switch policy {
			case EjectRehash:
				eventually(t, "ejection", func() bool { return liveCount(s) == 2 })
				base := res.ok.Load()
				eventually(t, "load after ejection", func() bool { return res.ok.Load() > base+1000 })
			case EjectFailFast:
				eventually(t, "the server to be marked down", func() bool { return b.health.isDown() })
			}
			if policy == EjectNone && b.health.isDown() {
				t.Fatal("ejection none marked the server down")
			}
			victim.start(t)
			eventually(t, "restore", func() bool { return !b.health.isDown() && liveCount(s) == 3 })
			dead.Store("")
			base := res.ok.Load()
			eventually(t, "load after restore", func() bool { return res.ok.Load() > base+500 })
			close(stop)
			wg.Wait()
			if len(res.connErrors) > 0 || len(res.liveKeyErrors) > 0 {
				t.Fatalf("connections dropped: %v\nlive keys failed (%d): %q", res.connErrors, len(res.liveKeyErrors), res.liveKeyErrors[:min(5, len(res.liveKeyErrors))])
			}
			t.Logf("%s: %d good rounds, %d failures all on the victim's keys", policy, res.ok.Load(), res.deadKeyErrors.Load())
		})
	}
}

// probeLog records the errors of the probes a pool logs as failed.
type probeLog struct {
	mu   sync.Mutex
	errs []error
}

func (l *probeLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *probeLog) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *probeLog) WithGroup(string) slog.Handler            { return l }

func (l *probeLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "probe failed" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if err, ok := a.Value.Any().(error); ok {
			l.mu.Lock()
			l.errs = append(l.errs, err)
			l.mu.Unlock()
		}
		return true
	})
	return nil
}

// count returns how many logged probe errors wrap target.
func (l *probeLog) count(target error) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, err := range l.errs {
		if errors.Is(err, target) {
			n++
		}
	}
	return n
}

// TestRedisLoadingServerIsDown restarts a redis-server that must load
// its data set, slowly (key-load-delay): its -LOADING replies mark it
// down (fail-fast, one failure), its probes keep failing with
// ErrServerLoading while it loads, and once it is ready the probe
// restores it and its keys read the values it loaded.
func TestRedisLoadingServerIsDown(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	slow := startRedis(t, 0, "--dir", dir, "--dbfilename", "dump.rdb")
	other := startRedis(t, 0)
	direct := dialRedis(t, slow.addr)
	value := strings.Repeat("x", 1000)
	for i := range 2000 {
		direct.send("SET", fmt.Sprint("load:", i), value)
	}
	for range 2000 {
		direct.do1()
	}
	if got := direct.do("SAVE"); got != "+OK\r\n" {
		t.Fatalf("SAVE: %q", got)
	}
	slow.stop()
	// Each key takes 5 ms to load (10 s in all, unless the test ends it
	// sooner), and the server answers between keys.
	slow.args = append(slow.args, "--key-load-delay", "5000", "--loading-process-events-interval-bytes", "1024")
	slow.start(t)

	log := &probeLog{}
	cfg, err := ParseConfig([]byte(redisPoolYAML(`  ejection: fail-fast
  server_failure_limit: 1
  health_check: {interval: 20, timeout: 5000}
`, slow, other)))
	if err != nil {
		t.Fatal(err)
	}
	s := New(cfg, slog.New(log))
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	p := s.testPool("p")
	var key string
	for i := 0; key == ""; i++ {
		if k := fmt.Sprint("load:", i); ownerOf(p, k) == slow.addr {
			key = k
		}
	}
	c := dialRedis(t, s.Addr("p").String())
	if got := c.do("GET", key); !strings.HasPrefix(got, "-LOADING") {
		t.Fatalf("GET while loading: %q, want the server's -LOADING", got)
	}
	b := p.backends[0]
	eventually(t, "two probes to find the server loading", func() bool { return log.count(ErrServerLoading) >= 2 })
	if !b.health.isDown() {
		t.Fatal("a loading server is not marked down")
	}
	if got := c.do("GET", key); !strings.HasPrefix(got, "-ERR") {
		t.Fatalf("GET while down: %q, want the proxy's error", got)
	}
	// The data set loads at once now.
	if got := dialRedis(t, slow.addr).do("CONFIG", "SET", "key-load-delay", "0"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET: %q", got)
	}
	eventually(t, "restore once loaded", func() bool { return !b.health.isDown() })
	if got := c.do("GET", key); got != fmt.Sprintf("$%d\r\n%s\r\n", len(value), value) {
		t.Fatalf("GET after loading: %.40q, want the value it loaded", got)
	}
}
