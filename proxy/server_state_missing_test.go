package proxy

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStateMissingWarns: a pool of a history-dependent distribution that
// starts without its state file while its servers hold keys that then
// miss says so - a WARN naming the file, the pool's state_missing in
// /v1/pools and on the status page, and kolco_proxy_state_missing 1 -
// where a first start on empty servers, and a restart with the file, say
// nothing of it. The history matters here: a server was removed before
// the keys were written. For memcached and Redis.
func TestStateMissingWarns(t *testing.T) {
	t.Parallel()
	for _, proto := range []string{"memcached", "redis"} {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			var lines []string
			extra := "  distribution: jump\n"
			for i := range 3 {
				addr := ""
				if proto == "redis" {
					addr = startRedis(t, 0).addr
				} else {
					addr = startMemcached(t, 0).addr
				}
				lines = append(lines, fmt.Sprintf("%s:1 m%d", addr, i))
			}
			if proto == "redis" {
				extra += "  redis: true\n"
			}
			f := &configFile{t: t, path: filepath.Join(t.TempDir(), "nutcracker.yml"), extra: extra, lines: lines,
				global: "kolco:\n  admin_listen: 127.0.0.1:0\n"}
			f.write(0, 1, 2)
			statePath := f.path + ".kolco-state"

			s, logs := f.startLogged()
			eventually(t, "the check of the empty servers", func() bool {
				return len(logs.lines(t, "pool started without its placement history; its servers hold no data")) == 1
			})
			checkStateMissing(t, s, logs, false)
			f.write(0, 2) // a history: m1 removed
			if err := s.ReloadFile(context.Background(), f.path); err != nil {
				t.Fatal(err)
			}
			c, err := dialKV(proto, s.Addr("p").String())
			if err != nil {
				t.Fatal(err)
			}
			for i := range 50 {
				if err := c.set(fmt.Sprintf("key:%d", i), "v"); err != nil {
					t.Fatal(err)
				}
			}
			c.close()
			shutdown(s)

			s, logs = f.startLogged() // the state file is there: restored
			if len(logs.lines(t, "placement restored from the state file")) != 1 {
				t.Fatal("the restart did not restore the placement from the state file")
			}
			checkStateMissing(t, s, logs, false)
			shutdown(s)

			if err := os.Remove(statePath); err != nil {
				t.Fatal(err)
			}
			s, logs = f.startLogged()
			warn := `pool started without its placement history while its servers hold data: keys are placed afresh, and reads of those that moved miss; ` +
				`if the pool ran before, stop the proxy, put the state file back (from a backup or a proxy beside it) and start again`
			eventually(t, "the WARN", func() bool { return len(logs.lines(t, warn)) == 1 })
			rec := logs.lines(t, warn)[0]
			if rec["level"] != "WARN" || rec["why"] != "no state file at "+statePath || rec["items"] != float64(50) || rec["pool"] != "p" ||
				rec["misses"].(float64) <= 0 {
				t.Errorf("the WARN says %v", rec)
			}
			checkStateMissing(t, s, logs, true)
		})
	}
}

// checkStateMissing checks what the admin endpoint, the status page and
// the metrics say of the pool's placement history.
func checkStateMissing(t *testing.T, s *Server, logs *logBuffer, missing bool) {
	t.Helper()
	var ps PoolStatus
	if code := adminGet(t, s, "/v1/pools/p", "", &ps); code != http.StatusOK {
		t.Fatalf("/v1/pools/p: %d", code)
	}
	if (ps.StateMissing != nil) != missing {
		t.Errorf("/v1/pools/p: state_missing %+v, want it set: %v", ps.StateMissing, missing)
	}
	if missing && (ps.StateMissing.Items != 50 || !strings.HasPrefix(ps.StateMissing.Why, "no state file at ")) {
		t.Errorf("/v1/pools/p: state_missing %+v", ps.StateMissing)
	}
	page := adminBody(t, s, "/status")
	if strings.Contains(page, `class="state-missing`) != missing {
		t.Errorf("the status page says the history is missing: %v, want %v", !missing, missing)
	}
	want := `kolco_proxy_state_missing{pool="p"} 0`
	if missing {
		want = `kolco_proxy_state_missing{pool="p"} 1`
	}
	if metrics := adminBody(t, s, "/metrics"); !strings.Contains(metrics, want+"\n") {
		t.Errorf("the metrics lack %q", want)
	}
	if !missing && len(logs.lines(t, "pool started without its placement history while its servers hold data: keys are placed afresh, and reads of those that moved miss; "+
		"if the pool ran before, stop the proxy, put the state file back (from a backup or a proxy beside it) and start again")) > 0 {
		t.Error("a WARN of a missing placement history")
	}
}

// adminBody returns the body of the admin endpoint's answer to GET path.
func adminBody(t *testing.T, s *Server, path string) string {
	t.Helper()
	resp, err := http.Get("http://" + s.AdminAddr().String() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d, %v", path, resp.StatusCode, err)
	}
	return string(b)
}

// startLogged starts a proxy on the file, as start does, logging at debug
// level to the returned buffer.
func (c *configFile) startLogged() (*Server, *logBuffer) {
	c.t.Helper()
	cfg, err := LoadConfig(c.path)
	if err != nil {
		c.t.Fatal(err)
	}
	logs := &logBuffer{}
	s := New(cfg, slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err := s.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { shutdown(s) })
	return s, logs
}

// TestExplainSaysWhereStateLives: --check says where a history-dependent
// pool's history is kept - the state file, etcd, or nowhere (Sentinel's) - and says
// nothing of it for a pool whose placement follows from its servers.
func TestExplainSaysWhereStateLives(t *testing.T) {
	const servers = "  servers: [\"127.0.0.1:2:1 a\"]\n"
	for _, tc := range []struct {
		path, yaml, want string
	}{
		{"/etc/kolco/nutcracker.yml", "  distribution: jump\n" + servers, "is kept in /etc/kolco/nutcracker.yml.kolco-state, rewritten on each change"},
		{"", "  distribution: anchor\n" + servers, "is not kept (kolco.state_file is not set"},
		{"/etc/kolco/n.yml", "  distribution: jumpback\n  membership: {etcd: {endpoints: [\"http://127.0.0.1:2379\"], prefix: /kolco/cache/}}\n" + servers,
			"is kept in etcd under /kolco/cache/"},
		{"/etc/kolco/n.yml", "  distribution: slots\n  redis: true\n  membership: {sentinel: {sentinels: [\"127.0.0.1:26379\"]}}\n" + servers,
			"is not kept, nor needed: the servers are the Sentinel masters' names"},
		{"/etc/kolco/n.yml", "  distribution: ring\n" + servers, ""},
		{"/etc/kolco/n.yml", "  distribution: ketama\n" + servers, ""},
	} {
		cfg, err := ParseConfig([]byte("p:\n  listen: 127.0.0.1:1\n" + tc.yaml))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Path = tc.path
		var b strings.Builder
		if err := cfg.Explain(&b); err != nil {
			t.Fatal(err)
		}
		line := ""
		for l := range strings.Lines(b.String()) {
			if strings.HasPrefix(l, "  state: ") {
				line = l
			}
		}
		if tc.want == "" && line != "" || !strings.Contains(line, tc.want) {
			t.Errorf("%s%s: the state line is %q, want one with %q", tc.path, tc.yaml, line, tc.want)
		}
	}
}

// TestExplainSaysWhereAStoresMoveLives: --check says where a Redis
// store keeps a move under way - the state file, by default beside the
// configuration file - or that it is not kept, and says nothing of it
// for a pool that is no store.
func TestExplainSaysWhereAStoresMoveLives(t *testing.T) {
	const servers = "  redis: true\n  servers: [\"127.0.0.1:2:1 a\"]\n"
	for _, tc := range []struct {
		path, yaml, want string
	}{
		{"/etc/kolco/nutcracker.yml", "  store: {enabled: true}\n" + servers, "is kept in /etc/kolco/nutcracker.yml.kolco-state, so that a proxy restarted"},
		{"/etc/kolco/n.yml", "  store: {enabled: true}\n" + servers + "kolco:\n  state_file: /var/lib/kolco/state\n", "is kept in /var/lib/kolco/state"},
		{"", "  store: {enabled: true}\n" + servers, "is not kept (kolco.state_file is not set"},
		{"/etc/kolco/n.yml", servers, ""},
	} {
		cfg, err := ParseConfig([]byte("p:\n  listen: 127.0.0.1:1\n" + tc.yaml))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Path = tc.path
		var b strings.Builder
		if err := cfg.Explain(&b); err != nil {
			t.Fatal(err)
		}
		line := ""
		for l := range strings.Lines(b.String()) {
			if strings.HasPrefix(l, "  store state: ") {
				line = l
			}
		}
		if tc.want == "" && line != "" || !strings.Contains(line, tc.want) {
			t.Errorf("%s%s: the store state line is %q, want one with %q", tc.path, tc.yaml, line, tc.want)
		}
	}
}
