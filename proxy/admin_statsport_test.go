package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/testproc"
)

// readStatsPort connects to a stats port and decodes the JSON it sends
// before it closes the connection.
func readStatsPort(t *testing.T, addr string) map[string]any {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	body, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("stats port %s sent %q: %v", addr, body, err)
	}
	return doc
}

// statsTraffic is the same traffic for both proxies: stores, hits and
// misses on both servers, a get over both (of multi, keys of both), a
// version, and a client that closes its connection.
func statsTraffic(t *testing.T, addr, multi string) {
	c := dial(t, addr)
	for i := range 20 {
		if got := c.do(fmt.Sprintf("set key%d 0 0 5\r\nhello\r\n", i)); got != "STORED\r\n" {
			t.Fatalf("set: %q", got)
		}
	}
	for i := range 30 {
		c.do(fmt.Sprintf("get key%d\r\n", i))
	}
	c.do("get " + multi + "\r\n")
	c.do("version\r\n")
	c.conn.Close()
}

// statsPair starts nutcracker and the proxy with pool p over servers,
// each with its stats port on loopback refreshed every 200 ms; it returns
// nutcracker's pool and stats addresses, and the proxy.
func statsPair(t *testing.T, servers string) (ncListen, ncStats string, s *Server) {
	t.Helper()
	bin := needBinary(t, "nutcracker")
	ncListen, ncStats = fmt.Sprintf("127.0.0.1:%d", freePort(t)), fmt.Sprintf("127.0.0.1:%d", freePort(t))
	dir := t.TempDir()
	conf := filepath.Join(dir, "nc.yml")
	if err := os.WriteFile(conf, []byte("p:\n  listen: "+ncListen+"\n"+servers), 0o600); err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ncStats)
	nc := exec.Command(bin, "-c", conf, "-s", port, "-a", "127.0.0.1", "-i", "200", "-o", filepath.Join(dir, "nc.log"))
	if err := testproc.Start(nc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Process.Kill(); _ = nc.Wait() })
	waitListening(t, ncListen)
	s = startProxy(t, "kolco:\n  stats_listen: 127.0.0.1:0\n  stats_interval: 200\np:\n  listen: 127.0.0.1:0\n  timeout: 10000\n"+servers)
	return ncListen, ncStats, s
}

// TestStatsPortMatchesNutcracker runs nutcracker and the proxy with the
// same pool in front of the same servers and the same traffic, and
// compares their stats JSON: the same fields with the same types, and the
// same traffic figures where they mean the same (see docs/operations.md for
// the differences).
func TestStatsPortMatchesNutcracker(t *testing.T) {
	t.Parallel()
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0)}
	servers := fmt.Sprintf("  servers:\n   - %s:1 named\n   - %s:1\n", ms[0].addr, ms[1].addr)
	ncListen, ncStats, s := statsPair(t, servers)

	waitListening(t, s.Addr("p").String()) // as nutcracker's: one client more, closed
	var multi []string                     // keys of both servers
	for i, seen := 0, map[string]bool{}; len(seen) < 2 || len(multi) < 6; i++ {
		k := fmt.Sprint("key", i)
		seen[ownerOf(s.testPool("p"), k)] = true
		multi = append(multi, k)
	}
	statsTraffic(t, ncListen, strings.Join(multi, " "))
	statsTraffic(t, s.Addr("p").String(), strings.Join(multi, " "))
	settled := func(addr string) map[string]any {
		var doc map[string]any
		eventually(t, "the stats refreshed after the traffic", func() bool {
			doc = readStatsPort(t, addr)
			p, _ := doc["p"].(map[string]any)
			return p != nil && p["client_eof"] == 2.0
		})
		return doc
	}
	ncDoc, kDoc := settled(ncStats), settled(s.StatsAddr().String())
	compareStatsShape(t, "", ncDoc, kDoc)
	for _, path := range [][]string{
		{"curr_connections"}, {"total_connections"},
		{"p", "client_eof"}, {"p", "client_err"}, {"p", "client_connections"}, {"p", "server_ejects"}, {"p", "forward_error"},
	} {
		compareStat(t, ncDoc, kDoc, path...)
	}
	for _, server := range []string{"named", ms[1].addr} {
		for _, f := range serverFields {
			if f.name != "request_bytes" {
				compareStat(t, ncDoc, kDoc, "p", server, f.name)
			}
		}
		// nutcracker writes a space after the last key of each request a
		// get is split into ("get a b \r\n"); kolco does not. The split
		// get sent one such request to each server.
		nc, k := statAt(ncDoc, "p", server, "request_bytes"), statAt(kDoc, "p", server, "request_bytes")
		if nc != k.(float64)+1 {
			t.Errorf("p.%s.request_bytes: nutcracker %v, kolco %v, want one more", server, nc, k)
		}
	}
	// nutcracker 0.5.0 defines fragments but never counts them; kolco
	// counts the requests a multi-key get was split into.
	if got := statAt(kDoc, "p", "fragments"); statAt(ncDoc, "p", "fragments") != 0.0 || got != 2.0 {
		t.Errorf("fragments: nutcracker %v, kolco %v (want 0 and 2)", statAt(ncDoc, "p", "fragments"), got)
	}
}

// compareStatsShape checks that two stats documents have the same keys,
// with values of the same JSON types, all the way down.
func compareStatsShape(t *testing.T, at string, nc, k map[string]any) {
	t.Helper()
	keys := func(m map[string]any) []string {
		var ks []string
		for key := range m {
			ks = append(ks, key)
		}
		slices.Sort(ks)
		return ks
	}
	if !slices.Equal(keys(nc), keys(k)) {
		t.Errorf("%s keys: nutcracker %v, kolco %v", at, keys(nc), keys(k))
		return
	}
	for key, v := range nc {
		if reflect.TypeOf(v) != reflect.TypeOf(k[key]) {
			t.Errorf("%s.%s: nutcracker %T, kolco %T", at, key, v, k[key])
		}
		if sub, ok := v.(map[string]any); ok {
			compareStatsShape(t, at+"."+key, sub, k[key].(map[string]any))
		}
	}
}

func statAt(doc map[string]any, path ...string) any {
	var v any = doc
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	return v
}

func compareStat(t *testing.T, nc, k map[string]any, path ...string) {
	t.Helper()
	if a, b := statAt(nc, path...), statAt(k, path...); a != b {
		t.Errorf("%s: nutcracker %v, kolco %v", strings.Join(path, "."), a, b)
	}
}

// TestDescribeStatsMatchesNutcracker: -D lists the fields nutcracker -D
// lists, with the same descriptions.
func TestDescribeStatsMatchesNutcracker(t *testing.T) {
	out, err := testproc.CombinedOutput(exec.Command(needBinary(t, "nutcracker"), "-D"))
	if err != nil {
		t.Fatal(err)
	}
	_, want, ok := strings.Cut(string(out), "pool stats:")
	if !ok {
		t.Fatalf("nutcracker -D: %q", out)
	}
	if got := describeStats(); strings.TrimSpace(got) != strings.TrimSpace("pool stats:"+want) {
		t.Errorf("describe stats:\n%s\nnutcracker -D:\n%s", got, want)
	}
}

// TestStatsPortAnswersFromTheStart: a client that connects to the stats
// port as soon as the proxy has started gets the figures, not an empty
// document written before they were first gathered.
func TestStatsPortAnswersFromTheStart(t *testing.T) {
	m := startMemcached(t, 0)
	for range 20 {
		y := poolYAML("", m) + fmt.Sprintf("kolco:\n  stats_listen: 127.0.0.1:%d\n", freePort(t))
		cfg, err := ParseConfig([]byte(y))
		if err != nil {
			t.Fatal(err)
		}
		s := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		doc := readStatsPort(t, s.StatsAddr().String())
		if _, ok := doc["p"]; !ok {
			t.Fatalf("the stats port's first answer has no pool: %v", doc)
		}
		if err := s.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestStatsPortNoreplyMatchesNutcracker sends nutcracker and the proxy the
// same writes with noreply, as pymemcache sends them by default, and
// compares the server's figures: requests, their bytes, responses (none
// for a noreply write) and their bytes.
func TestStatsPortNoreplyMatchesNutcracker(t *testing.T) {
	t.Parallel()
	m := startMemcached(t, 0)
	servers := fmt.Sprintf("  servers:\n   - %s:1 mc\n", m.addr)
	ncListen, ncStats, s := statsPair(t, servers)
	waitListening(t, s.Addr("p").String()) // as nutcracker's: one client more, closed
	traffic := func(addr string) {
		c := dial(t, addr)
		var b strings.Builder
		for i := range 40 {
			fmt.Fprintf(&b, "set nr%d 0 0 5 noreply\r\nhello\r\n", i)
		}
		b.WriteString("add nr0 0 0 1 noreply\r\nx\r\n") // NOT_STORED, unsaid
		b.WriteString("incr nr1 1 noreply\r\n")         // CLIENT_ERROR at the server, unsaid
		b.WriteString("delete nr2 noreply\r\n")
		b.WriteString("touch nr3 10 noreply\r\n")
		c.send(b.String())
		if got := c.do("get nr5\r\n"); got != "VALUE nr5 0 5\r\nhello\r\nEND\r\n" {
			t.Fatalf("%s: get after the noreply writes: %q", addr, got)
		}
		c.conn.Close()
	}
	traffic(ncListen)
	traffic(s.Addr("p").String())
	settled := func(addr string) map[string]any {
		var doc map[string]any
		eventually(t, "the stats refreshed after the traffic", func() bool {
			doc = readStatsPort(t, addr)
			p, _ := doc["p"].(map[string]any)
			return p != nil && p["client_eof"] == 2.0
		})
		return doc
	}
	ncDoc, kDoc := settled(ncStats), settled(s.StatsAddr().String())
	for _, f := range []string{"requests", "request_bytes", "responses", "response_bytes", "server_eof", "server_err"} {
		compareStat(t, ncDoc, kDoc, "p", "mc", f)
	}
	for _, f := range []string{"client_eof", "client_err", "forward_error"} {
		compareStat(t, ncDoc, kDoc, "p", f)
	}
	t.Logf("nutcracker's server figures: %v", statAt(ncDoc, "p", "mc"))
}
