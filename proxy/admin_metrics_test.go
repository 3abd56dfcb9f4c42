package proxy

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestServerMetrics: the figures an operator alerts on, per server: up or
// down, hits and misses, bytes, latency, ejections and restores, and the
// share of keys under the placement in use; per pool, the bytes read from
// and written to clients.
func TestServerMetrics(t *testing.T) {
	a, b := startMemcached(t, 0), startMemcached(t, 0)
	deadPort := freePort(t)
	dead := fmt.Sprintf("127.0.0.1:%d", deadPort)
	s := startProxy(t, "p:\n  listen: 127.0.0.1:0\n  timeout: 10000\n  ejection: fail-fast\n  server_failure_limit: 1\n"+
		"  health_check: {interval: 50}\n  servers:\n   - "+a.addr+":1 a\n   - "+b.addr+":1 b\n   - "+dead+":1 d\n")
	p := s.testPool("p")
	c := dial(t, s.Addr("p").String())
	var sent, read int
	do := func(req string) string {
		got := c.do(req)
		sent, read = sent+len(req), read+len(got)
		return got
	}
	keys := diffKeys(80)
	live := map[string]bool{}
	for _, k := range keys[:60] {
		if owner := ownerOf(p, k); owner != dead {
			live[k] = true
			if got := do("set " + k + " 0 0 1\r\nx\r\n"); got != "STORED\r\n" {
				t.Fatalf("set %s: %q", k, got)
			}
		}
	}
	hits, misses := 0, 0
	for _, k := range keys {
		if !live[k] && ownerOf(p, k) == dead {
			do("get " + k + "\r\n") // fails: d is down
			continue
		}
		if strings.HasPrefix(do("get "+k+"\r\n"), "VALUE") {
			hits++
		} else {
			misses++
		}
	}
	c.conn.Close()
	eventually(t, "the client's close", func() bool { return p.stats.currConns.Load() == 0 })

	gotHits, gotMisses, shares := checkServerMetrics(t, s, []struct{ name, addr string }{{"a", a.addr}, {"b", b.addr}, {"d", dead}})
	if gotHits != float64(hits) || gotMisses != float64(misses) {
		t.Errorf("hits %v misses %v, want %d and %d", gotHits, gotMisses, hits, misses)
	}
	if math.Abs(shares-1) > 1e-9 {
		t.Errorf("shares add up to %v", shares)
	}
	if in, out := metricValue(t, s, "kolco_proxy_client_read_bytes_total", `pool="p"`), metricValue(t, s, "kolco_proxy_client_written_bytes_total", `pool="p"`); in != float64(sent) || out != float64(read) {
		t.Errorf("client bytes read %v written %v, want %d and %d", in, out, sent, read)
	}
	if n := metricValue(t, s, "kolco_proxy_request_duration_seconds_count", `command="get",pool="p"`); n != 80 {
		t.Errorf("%v get latencies for the pool, want 80", n)
	}

	// d comes back: it is probed, restored and up again.
	dl := serverLabel("d", dead)
	if n := metricValue(t, s, "kolco_proxy_ejections_total", dl); n != 1 {
		t.Errorf("d ejected %v times, want 1", n)
	}
	startMemcached(t, deadPort)
	eventually(t, "d restored", func() bool { return metricValue(t, s, "kolco_proxy_server_up", dl) == 1 })
	if n := metricValue(t, s, "kolco_proxy_restores_total", dl); n != 1 {
		t.Errorf("d restored %v times, want 1", n)
	}
}

// checkServerMetrics checks each server's up gauge (d is down), share of
// keys, latencies and bytes, and returns the hits, misses and shares
// summed over the servers.
func checkServerMetrics(t *testing.T, s *Server, servers []struct{ name, addr string }) (hits, misses, shares float64) {
	t.Helper()
	for _, sv := range servers {
		l := serverLabel(sv.name, sv.addr)
		hits += metricValue(t, s, "kolco_proxy_get_hits_total", l)
		misses += metricValue(t, s, "kolco_proxy_get_misses_total", l)
		share := metricValue(t, s, "kolco_proxy_server_key_share", l)
		if share < 0.2 || share > 0.5 {
			t.Errorf("server %s holds %.3f of the keys; three equal servers hold about a third each", sv.name, share)
		}
		shares += share
		up, want := metricValue(t, s, "kolco_proxy_server_up", l), 1.0
		if sv.name == "d" {
			want = 0
		}
		if up != want {
			t.Errorf("server %s up %v, want %v", sv.name, up, want)
		}
		if sv.name == "d" {
			continue
		}
		n := metricValue(t, s, "kolco_proxy_server_request_duration_seconds_count", l)
		if req := metricValue(t, s, "kolco_proxy_server_requests_total", l); n != req || n == 0 {
			t.Errorf("server %s: %v latencies for %v requests", sv.name, n, req)
		}
		if metricValue(t, s, "kolco_proxy_server_sent_bytes_total", l) == 0 || metricValue(t, s, "kolco_proxy_server_received_bytes_total", l) == 0 {
			t.Errorf("server %s: no bytes counted", sv.name)
		}
	}
	return hits, misses, shares
}
