package proxy

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestListenerTable checks the table of listeners (docs/operations.md,
// "What the proxy listens on") against what listens: the metrics and admin
// endpoints given as ":PORT" listen on 127.0.0.1 and ask for the admin
// token when there is one; the stats port asks for nothing; an IPv4
// address such as nutcracker's 0.0.0.0 is listened on as IPv4 alone (tests
// bind loopback only, so for 0.0.0.0 the network chosen is what is
// checked).
func TestListenerTable(t *testing.T) {
	b, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(string(b), "\n") {
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) == 5 && strings.HasPrefix(line, "| ") {
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			rows[cells[1]] = cells
		}
	}
	pool, stats := rows["`listen`"], rows["`kolco.stats_listen`, `-s`, `-a`"]
	metrics, admin := rows["`kolco.metrics_listen`"], rows["`kolco.admin_listen`"]
	if pool == nil || stats == nil || metrics == nil || admin == nil {
		t.Fatalf("docs/operations.md's listener table lacks a row: %v", rows)
	}

	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startProxy(t, "kolco:\n  metrics_listen: \":0\"\n  admin_listen: \":0\"\n  admin_token_file: "+token+
		"\n  stats_listen: 127.0.0.1:0\n"+poolYAML("", startMemcached(t, 0)))
	get := func(addr net.Addr, path, bearer string) int {
		req, err := http.NewRequest("GET", "http://"+addr.String()+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, ep := range []struct {
		row  []string
		addr net.Addr
	}{{metrics, s.MetricsAddr()}, {admin, s.AdminAddr()}} {
		host, _, _ := net.SplitHostPort(ep.addr.String())
		if !strings.Contains(ep.row[3], "`127.0.0.1:PORT`") || host != "127.0.0.1" {
			t.Errorf("%s: the table says %q; \":0\" listens on %s", ep.row[0], ep.row[3], ep.addr)
		}
		tokenAsked := get(ep.addr, "/metrics", "") == http.StatusUnauthorized && get(ep.addr, "/metrics", "s3cret") == http.StatusOK
		if !strings.Contains(ep.row[4], "admin token") || !tokenAsked {
			t.Errorf("%s: the table says %q; the token asked for: %v", ep.row[0], ep.row[4], tokenAsked)
		}
	}
	if c, err := net.Dial("tcp", s.StatsAddr().String()); err != nil || !strings.HasPrefix(stats[4], "none") {
		t.Errorf("stats port: the table says %q; reading it: %v", stats[4], err)
	} else {
		c.Close()
	}
	for _, row := range [][]string{pool, stats} {
		if !strings.Contains(row[3], "every IPv4 interface") || tcpNetwork("0.0.0.0:22222") != "tcp4" {
			t.Errorf("%s: the table says %q; 0.0.0.0 is listened on as %s", row[0], row[3], tcpNetwork("0.0.0.0:22222"))
		}
	}
	if !strings.Contains(stats[2], "`nutcracker`") || !strings.Contains(stats[3], "`0.0.0.0:22222`") {
		t.Errorf("stats port: the table says %q, %q; nutcracker's default is 0.0.0.0:22222", stats[2], stats[3])
	}
}
