package twemproxy_test

import (
	"fmt"
	"strconv"

	"testing"

	"github.com/kolco-dev/kolco/compat/twemproxy"
)

// TestNutcrackerLiveServers checks that only live servers count: with
// auto_eject_hosts, a server nobody listens on is ejected after its first
// failure, and nutcracker then places keys exactly as New does over the
// remaining servers (n, total weight and points recomputed).
func TestNutcrackerLiveServers(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	mc := lookPathOrSkip(t, "memcached", "memcached")
	nc := lookPathOrSkip(t, "nutcracker", "nutcracker")
	for ci, cfg := range []twemproxy.Config{{}, {Distribution: "modula", Hash: "md5"}} {
		t.Run(cmpOr(cfg.Distribution, "ketama"), func(t *testing.T) {
			weights := []int{1, 3, 2, 1}
			dead := 1 // the weight-3 server never starts
			var all, live []twemproxy.Server
			var livePorts []int
			lines := make([]string, len(weights))
			for i, w := range weights {
				p := freePort(t)
				s := twemproxy.Server{Host: "127.0.0.1", Port: p, Weight: w}
				if i != dead {
					start(t, p, mc, memcachedArgs(p)...)
					live, livePorts = append(live, s), append(livePorts, p)
				}
				all, lines[i] = append(all, s), s.String()
			}
			extra := "  auto_eject_hosts: true\n  server_failure_limit: 1\n  server_retry_timeout: 600000\n"
			listen := startNutcracker(t, nc, cfg, lines, extra)
			proxy := dialMC(t, listen)
			ejectDead(t, proxy)
			keys := memcacheKeys(uint64(200+ci), 2000, false)
			value := "live" + strconv.Itoa(ci)
			if err := proxy.setAll(keys, value); err != nil {
				t.Fatalf("set after ejection: %v", err)
			}
			pool, err := twemproxy.New(cfg, live)
			if err != nil {
				t.Fatal(err)
			}
			compareBackends(t, pool, livePorts, keys, value)
			// The same keys over all four servers would differ: the check
			// is not vacuous.
			full, _ := twemproxy.New(cfg, all)
			moved := 0
			for _, k := range keys {
				if all[full.Index(k)] != live[pool.Index(k)] {
					moved++
				}
			}
			if moved == 0 {
				t.Error("no key placed differently with the dead server counted")
			}
		})
	}
}

// ejectDead sets keys one at a time until one fails (the dead server was
// tried and ejected), then until 100 in a row succeed; at most 2000 sets.
func ejectDead(t *testing.T, c *mcConn) {
	t.Helper()
	failed, ok := false, 0
	for i := 0; i < 2000 && ok < 100; i++ {
		fmt.Fprintf(c.w, "set warm-%d 0 0 1\r\nx\r\n", i)
		if err := c.w.Flush(); err != nil {
			t.Fatal(err)
		}
		line, err := c.r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case line == "STORED\r\n" && failed:
			ok++
		case line == "STORED\r\n":
		default:
			failed, ok = true, 0
		}
	}
	if !failed || ok < 100 {
		t.Fatalf("the dead server was not ejected (failed %v, then %d stored)", failed, ok)
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
