package proxy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/membership/dns/dnstest"
	"github.com/kolco-dev/kolco/membership/etcd"
	"github.com/kolco-dev/kolco/membership/etcdtest"
	"github.com/kolco-dev/kolco/membership/sentinel/sentineltest"
)

// TestPlaceholderServersNeverRead: a pool on a membership source, started
// with its configured servers naming a server the source does not name -
// one that left the fleet and still holds keys - never reads from it,
// copies from it or deletes on it, for each kind of source: the first
// client is answered once the source's servers serve, a key only the
// configured server holds misses (and is not copied to the source's
// server), and a write leaves the configured server's copy alone.
func TestPlaceholderServersNeverRead(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"file", "etcd", "dns", "gossip"} {
		t.Run(kind, func(t *testing.T) {
			old, cur := startMemcached(t, 0), startMemcached(t, 0)
			for _, k := range []string{"t:1", "t:2"} {
				if got := dial(t, old.addr).do("set " + k + " 0 0 7\r\nplanted\r\n"); got != "STORED\r\n" {
					t.Fatalf("planting %s: %q", k, got)
				}
			}
			s := startProxy(t, "p:\n  listen: 127.0.0.1:0\n  distribution: ring\n  timeout: 10000\n"+
				"  servers: [\""+old.addr+":1 mc1\"]\n  membership: "+placeholderSource(t, kind, cur)+"\n")
			c := dial(t, s.Addr("p").String())
			if got := c.do("get t:1\r\n"); got != "END\r\n" {
				t.Errorf("get t:1, which only the configured server holds: %q, want a miss", got)
			}
			if got := c.do("set t:2 0 0 3\r\nnew\r\n"); got != "STORED\r\n" {
				t.Fatalf("set t:2: %q", got)
			}
			if got := dial(t, old.addr).do("get t:2\r\n"); got != "VALUE t:2 0 7\r\nplanted\r\nEND\r\n" {
				t.Errorf("the configured server's t:2 after a write through the proxy: %q, want it untouched", got)
			}
			if holds(t, cur, "t:1") {
				t.Error("t:1 was copied from the configured server to the source's")
			}
			if got := c.do("get t:2\r\n"); got != "VALUE t:2 0 3\r\nnew\r\nEND\r\n" {
				t.Errorf("get t:2 after the write: %q", got)
			}
		})
	}
}

// placeholderSource returns the membership key of a source of kind that
// names one server, m, as mc2.
func placeholderSource(t *testing.T, kind string, m *memcached) string {
	t.Helper()
	switch kind {
	case "file":
		path := filepath.Join(t.TempDir(), "members.yml")
		if err := os.WriteFile(path, []byte("src:\n  servers:\n   - "+m.addr+":1 mc2\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return "{file: {path: " + path + ", interval: 20, settle: 20}}"
	case "etcd":
		srv := etcdtest.Start(t, etcdtest.Config{})
		apply(t, storeFor(t, srv, "/kolco/p/"), etcd.Edit{Change: kolco.Change{Add: []kolco.Node{{ID: "mc2", Addr: m.addr}}}})
		return "{etcd: {endpoints: [\"" + srv.Endpoint + "\"], prefix: /kolco/p/}}"
	case "dns":
		d := dnstest.Start(t)
		host, port, _ := strings.Cut(m.addr, ":")
		if err := d.Set(mdns.TypeA, "mc.test. 5 IN A "+host); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("{dns: {name: mc.test., records: A, port: %s, stable_addresses: true, resolver: %q, interval: 20}}", port, d.Addr)
	default:
		seed := sidecar(t, nil, "mc2", m.addr)
		return fmt.Sprintf("{gossip: {bind: \"127.0.0.1:%d\", seeds: [%q], probe_interval: 100, probe_timeout: 50, gossip_interval: 20}}",
			freePort(t), seed.Addr())
	}
}

// TestPlaceholderServersNeverReadSentinel: a Redis pool on Sentinels,
// whose configured address for its one master is another redis-server
// (a primary demoted long ago, say): no request reaches that server, the
// first one included.
func TestPlaceholderServersNeverReadSentinel(t *testing.T) {
	t.Parallel()
	c := sentineltest.Start(t, time.Second, "shard-a")
	c.WaitReady(t)
	old := startRedis(t, 0)
	for _, k := range []string{"t:1", "t:2"} {
		if got := dialRedis(t, old.addr).do("SET", k, "planted"); got != "+OK\r\n" {
			t.Fatalf("planting %s: %q", k, got)
		}
	}
	s := startProxy(t, fmt.Sprintf("p:\n  listen: 127.0.0.1:0\n  redis: true\n  distribution: ring\n  timeout: 1000\n"+
		"  membership: {sentinel: {sentinels: [%s], interval: 500, timeout: 300}}\n  servers:\n   - %s:1 shard-a\n",
		strings.Join(c.SentinelAddrs(), ", "), old.addr))
	rc := dialRedis(t, s.Addr("p").String())
	if got := rc.do("GET", "t:1"); got != "$-1\r\n" {
		t.Errorf("GET t:1, which only the configured address holds: %q, want nil", got)
	}
	if got := rc.do("SET", "t:2", "new"); got != "+OK\r\n" {
		t.Fatalf("SET t:2: %q", got)
	}
	if got := dialRedis(t, old.addr).do("GET", "t:2"); got != "$7\r\nplanted\r\n" {
		t.Errorf("the configured address's t:2 after a write through the proxy: %q, want it untouched", got)
	}
}
