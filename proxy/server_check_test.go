package proxy

import (
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/compat/twemproxy"
)

// TestCheckFilesStateFile: a state file that a start would refuse fails
// the check, with the file and the line where it goes wrong - empty, not
// JSON, cut short, of the wrong shape, a record that does not restore -
// and a good one, or none, or one recording other servers than the
// configuration's (a start applies the difference as a change), passes.
func TestCheckFilesStateFile(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "nutcracker.yml")
	if err := os.WriteFile(conf, []byte("p:\n  listen: 127.0.0.1:1\n  distribution: jump\n  servers:\n   - 127.0.0.1:2:1 a\n   - 127.0.0.1:3:1 b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(conf)
	if err != nil {
		t.Fatal(err)
	}
	state := conf + ".kolco-state"
	if err := cfg.CheckFiles(); err != nil {
		t.Fatalf("no state file (a first start): %v", err)
	}
	l, err := newLayout(settingsOf(cfg.Pools["p"].WithDefaults()), cfg.Pools["p"].nodes(), nil)
	if err != nil {
		t.Fatal(err)
	}
	good := encodeState(map[string]*poolState{"p": recordOf(l)})
	// A server renamed in the record and not in its state: the record
	// does not restore.
	torn := strings.Replace(string(good), `"id": "b"`, `"id": "c"`, 1)
	for _, tc := range []struct{ name, content, want string }{
		{"empty", "", "the file is empty"},
		{"blank", "\n  \n", "the file is empty"},
		{"garbage", "garbage", "line 1, column 1: invalid character 'g'"},
		{"cut short", string(good[:len(good)/2]), "the file ends in the middle of its JSON document"},
		{"wrong shape", "{\"kolco_proxy_state\": 1,\n \"pools\": {\"p\": 3}}", "line 2, column"},
		{"torn", torn, "invalid placement state"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(state, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			err := cfg.CheckFiles()
			var ce *ConfigError
			if !errors.As(err, &ce) || !errors.Is(err, ErrBadStateFile) || !strings.Contains(err.Error(), state) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v: want a state file error naming %s and saying %q", err, state, tc.want)
			}
		})
	}
	if err := os.WriteFile(state, good, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := cfg.CheckFiles(); err != nil {
		t.Errorf("a good state file: %v", err)
	}
	// A record over other servers, as a configuration edited while the
	// proxy was down leaves it: a start serves them and applies the
	// configuration as a change, so the check passes.
	ac := *cfg.Pools["p"].WithDefaults()
	ac.Servers = []twemproxy.Server{cfg.Pools["p"].Servers[0], {Host: "127.0.0.1", Port: 4, Weight: 1, Name: "c"}}
	l, err = newLayout(settingsOf(&ac), ac.nodes(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(state, encodeState(map[string]*poolState{"p": recordOf(l)}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := cfg.CheckFiles(); err != nil {
		t.Errorf("a state file recording other servers: %v", err)
	}
}

// TestCheckFilesMembershipFile: a membership file the pool's source would
// refuse fails the check - missing, not YAML, naming another pool, a
// server line it cannot read - naming the file, and its line where the
// parser gives one; a good one passes.
func TestCheckFilesMembershipFile(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "nutcracker.yml")
	if err := os.WriteFile(conf, []byte("p:\n  listen: 127.0.0.1:1\n  distribution: ring\n  servers: [\"127.0.0.1:2:1 a\"]\n"+
		"  membership: {file: {path: members.yml, pool: p}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(conf)
	if err != nil {
		t.Fatal(err)
	}
	members := filepath.Join(dir, "members.yml")
	for _, tc := range []struct{ name, content, want string }{
		{"missing", "", "no such file"},
		{"not YAML", "p:\n  servers: [\n", "yaml: line 2"},
		{"another pool", "q:\n  servers: [\"127.0.0.1:2:1 a\"]\n", `no pool "p"`},
		{"a bad server line", "p:\n  servers:\n   - 127.0.0.1:2 a\n", "line 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_ = os.Remove(members)
			if tc.name != "missing" {
				if err := os.WriteFile(members, []byte(tc.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := cfg.CheckFiles()
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Key != "membership" || ce.Pool != "p" || !strings.Contains(err.Error(), members) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v: want a membership error naming %s and saying %q", err, members, tc.want)
			}
		})
	}
	if err := os.WriteFile(members, []byte("p:\n  servers: [\"127.0.0.1:2:1 a\", \"127.0.0.1:3:1 b\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := cfg.CheckFiles(); err != nil {
		t.Errorf("a good membership file: %v", err)
	}
}

// TestAdminTokenFileBesideTheConfiguration: a relative admin_token_file is
// taken from the configuration file's directory, as the TLS files, the
// state file and membership files are, not from where the proxy started.
func TestAdminTokenFileBesideTheConfiguration(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "nutcracker.yml")
	y := "kolco:\n  admin_listen: 127.0.0.1:0\n  admin_token_file: token\n" + poolYAML("", startMemcached(t, 0))
	if err := os.WriteFile(conf, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(conf)
	if err != nil {
		t.Fatal(err)
	}
	s := New(cfg, nil)
	if err := s.Start(); err != nil {
		t.Fatalf("start from another directory: %v", err)
	}
	t.Cleanup(func() { shutdown(s) })
	if code := adminGet(t, s, "/v1/pools", "s3cret", nil); code != http.StatusOK {
		t.Errorf("GET /v1/pools with the token: %d", code)
	}
}

// TestEndpointsLogged: the start logs where the admin endpoint, /metrics
// and the stats port listen, as it logs each pool's address: the log said
// nothing of them.
func TestEndpointsLogged(t *testing.T) {
	y := "kolco:\n  admin_listen: 127.0.0.1:0\n  metrics_listen: 127.0.0.1:0\n  stats_listen: 127.0.0.1:0\n" + poolYAML("", startMemcached(t, 0))
	cfg, err := ParseConfig([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	s := New(cfg, slog.New(slog.NewJSONHandler(logs, nil)))
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdown(s) })
	want := map[string]string{"admin": s.AdminAddr().String(), "metrics": s.MetricsAddr().String(), "stats": s.StatsAddr().String()}
	got := map[string]string{}
	for _, l := range logs.lines(t, "listening") {
		if e, ok := l["endpoint"].(string); ok {
			got[e], _ = l["addr"].(string)
		}
	}
	for e, addr := range want {
		if got[e] != addr {
			t.Errorf("endpoint %s logged at %q, listens on %s", e, got[e], addr)
		}
	}
}
