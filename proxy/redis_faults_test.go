package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

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
