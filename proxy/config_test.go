package proxy

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// nutcrackerYAML holds memcached pools written as twemproxy's own sample
// configuration writes them (conf/nutcracker.yml of twemproxy 0.5).
const nutcrackerYAML = `
alpha:
  listen: 127.0.0.1:22121
  hash: fnv1a_64
  distribution: ketama
  auto_eject_hosts: true
  redis: false
  server_retry_timeout: 2000
  server_failure_limit: 1
  servers:
   - 127.0.0.1:11211:1

gamma:
  listen: 127.0.0.1:22123
  hash: fnv1a_64
  distribution: ketama
  timeout: 400
  backlog: 1024
  preconnect: true
  auto_eject_hosts: true
  server_retry_timeout: 2000
  server_failure_limit: 3
  servers:
   - 127.0.0.1:11212:1
   - 127.0.0.1:11213:1

omega:
  listen: 127.0.0.1:22125
  hash: hsieh
  distribution: ketama
  auto_eject_hosts: false
  servers:
   - 127.0.0.1:11214:100000
   - 127.0.0.1:11215:1

sigma:
  listen: 127.0.0.1:22126
  hash: fnv1a_64
  hash_tag: "{}"
  distribution: modula
  server_connections: 4
  servers:
   - 127.0.0.1:11216:1 server1
   - 127.0.0.1:11217:2 server2
`

func TestParseNutcrackerConfig(t *testing.T) {
	cfg, err := ParseConfig([]byte(nutcrackerYAML))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cfg.PoolNames(), ","); got != "alpha,gamma,omega,sigma" {
		t.Fatalf("pools %s", got)
	}
	a, g, o, s := cfg.Pools["alpha"], cfg.Pools["gamma"], cfg.Pools["omega"], cfg.Pools["sigma"]
	if a.Ejection != EjectRehash || a.ServerFailureLimit != 1 || a.Timeout != time.Second || a.ServerConnections != 1 {
		t.Errorf("alpha: %+v", a)
	}
	if g.Timeout != 400*time.Millisecond || !g.Preconnect || g.Backlog != 1024 || len(g.Servers) != 2 {
		t.Errorf("gamma: %+v", g)
	}
	if o.Ejection != EjectNone || o.Hash != "hsieh" || o.ServerRetryTimeout != 30*time.Second || o.ServerFailureLimit != 2 {
		t.Errorf("omega: %+v", o)
	}
	if s.Distribution != "modula" || s.HashTag != "{}" || s.ServerConnections != 4 || s.MaxValueSize != 1<<20 {
		t.Errorf("sigma: %+v", s)
	}
	if s.FlushAll != "refuse" || s.MaxClientConnections != 10000 || s.HealthCheck.Interval != 30*time.Second {
		t.Errorf("sigma kolco defaults: %+v", s)
	}
}

// TestNutcrackerAcceptsTestConfig checks with the real nutcracker that the
// configuration above is one it accepts, so that the test above is about
// real twemproxy files.
func TestNutcrackerAcceptsTestConfig(t *testing.T) {
	bin := needBinary(t, "nutcracker")
	path := filepath.Join(t.TempDir(), "nc.yml")
	if err := os.WriteFile(path, []byte(nutcrackerYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-t", "-c", path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "syntax is ok") {
		t.Fatalf("nutcracker -t: %v\n%s", err, out)
	}
}

func TestParseConfigKolcoKeys(t *testing.T) {
	cfg, err := ParseConfig([]byte(`
kolco:
  metrics_listen: 127.0.0.1:9150
  log_level: debug
p:
  listen: 127.0.0.1:22121
  auto_eject_hosts: true
  ejection: fail-fast
  health_check: {interval: 500, timeout: 100}
  max_client_connections: 10
  client_idle_timeout: 60000
  max_value_size: 2048
  flush_all: broadcast
  servers: ["127.0.0.1:11211:1"]
`))
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Pools["p"]
	if p.Ejection != EjectFailFast || p.HealthCheck.Interval != 500*time.Millisecond || p.HealthCheck.Timeout != 100*time.Millisecond ||
		p.MaxClientConnections != 10 || p.ClientIdleTimeout != time.Minute || p.MaxValueSize != 2048 || p.FlushAll != "broadcast" {
		t.Fatalf("%+v", p)
	}
	if cfg.Global.MetricsListen != "127.0.0.1:9150" || cfg.Global.ShutdownTimeout != 5*time.Second {
		t.Fatalf("%+v", cfg.Global)
	}
}

func TestParseConfigErrors(t *testing.T) {
	pool := func(extra string) string {
		return "p:\n  listen: 127.0.0.1:22121\n  servers: [\"127.0.0.1:11211:1\"]\n" + extra
	}
	tests := []struct{ name, yaml, want string }{
		{"empty", "", "no pools"},
		{"not yaml", "p: [", "yaml"},
		{"unknown key", pool("  listn: x\n"), "listn"},
		{"redis", pool("  redis: true\n"), "redis"},
		{"bad listen", "p:\n  listen: nowhere\n  servers: [\"a:1:1\"]\n", "listen"},
		{"unix listen bad mode", "p:\n  listen: /tmp/x.sock 0999\n  servers: [\"a:1:1\"]\n", "octal"},
		{"unix listen mode too large", "p:\n  listen: /tmp/x.sock 01777\n  servers: [\"a:1:1\"]\n", "octal"},
		{"one socket twice", "p:\n  listen: /tmp/x.sock 0600\n  servers: [\"a:1:1\"]\nq:\n  listen: /tmp/x.sock\n  servers: [\"a:1:1\"]\n", "both listen on /tmp/x.sock"},
		{"server socket path too long", "p:\n  listen: 127.0.0.1:1\n  servers: [\"/" + strings.Repeat("x", 107) + ":1\"]\n", "107 bytes"},
		{"unix listen path too long", "p:\n  listen: /" + strings.Repeat("x", 107) + "\n  servers: [\"a:1:1\"]\n", "107 bytes"},
		{"bad hash", pool("  hash: sha1\n"), "hash"},
		{"bad hash tag", pool("  hash_tag: \"{\"\n"), "hash_tag"},
		{"random", pool("  distribution: random\n"), "random"},
		{"bad distribution", pool("  distribution: chaos\n"), "distribution"},
		{"twemproxy hash with kolco algorithm", pool("  distribution: ring\n  hash: md5\n"), "key_hash"},
		{"key_hash with ketama", pool("  key_hash: xxh3\n"), "key_hash"},
		{"bad key_hash", pool("  distribution: ring\n  key_hash: sha1\n"), "key_hash"},
		{"negative vnodes", pool("  distribution: ring\n  vnodes: -1\n"), "vnodes"},
		{"negative timeout", pool("  timeout: -1\n"), "timeout"},
		{"no servers", "p:\n  listen: 127.0.0.1:1\n", "servers"},
		{"bad server", "p:\n  listen: 127.0.0.1:1\n  servers: [\"a:b:1\"]\n", "port"},
		{"zero weight", "p:\n  listen: 127.0.0.1:1\n  servers: [\"a:1:0\"]\n", "weight"},
		{"duplicate name", "p:\n  listen: 127.0.0.1:1\n  servers: [\"a:1:1 x\", \"b:1:1 x\"]\n", "same name"},
		{"duplicate address", "p:\n  listen: 127.0.0.1:1\n  servers: [\"a:1:1 x\", \"a:1:1 y\"]\n", "same address"},
		{"rehash without eject", pool("  ejection: rehash\n"), "auto_eject_hosts"},
		{"bad ejection", pool("  ejection: sometimes\n"), "ejection"},
		{"timeout 0", pool("  timeout: 0\n"), "no timeout"},
		{"server_failure_limit 0", pool("  server_failure_limit: 0\n"), "eject on the first failure"},
		{"server_retry_timeout 0", pool("  server_retry_timeout: 0\n"), "retry at once"},
		{"none with replicas", "p:\n  listen: 127.0.0.1:22121\n  servers: [\"127.0.0.1:11211:1\", \"127.0.0.1:11212:1\"]\n  distribution: ring\n  replicas: 2\n  ejection: none\n", "none cannot be used with replicas"},
		{"bad flush_all", pool("  flush_all: yes\n"), "flush_all"},
		{"same listen", pool("") + "q:\n  listen: 127.0.0.1:22121\n  servers: [\"127.0.0.1:11211:1\"]\n", "both listen"},
		{"bad log level", pool("") + "kolco:\n  log_level: loud\n", "log_level"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tc.yaml))
			if !errors.Is(err, ErrBadConfig) {
				t.Fatalf("got %v, want ErrBadConfig", err)
			}
			// The message must point at the culprit for a human.
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}

func TestExplain(t *testing.T) {
	cfg, err := ParseConfig([]byte(nutcrackerYAML))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := cfg.Explain(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		`pool "sigma": memcached on 127.0.0.1:22126`,
		`modula over fnv1a_64`,
		`ring name "server2"`,
		`nominal share  66.7%`,
		`ring name "127.0.0.1"`, // port 11211: hashed by host alone
		`keys move to the live servers (rehash)`,
		`never marked down, as nutcracker without auto_eject_hosts`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("explain output lacks %q:\n%s", want, out)
		}
	}
}

// FuzzParseConfig checks that no input panics the parser and that every
// configuration it accepts validates again unchanged and can be explained.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(nutcrackerYAML))
	f.Add([]byte("p:\n  listen: 127.0.0.1:1\n  servers: [\"a:1:1 x\"]\n  ejection: fail-fast\n"))
	f.Add([]byte("kolco: {metrics_listen: \"127.0.0.1:0\"}\np: {listen: \"[::1]:1\", servers: [\"::1:2:3\"]}\n"))
	f.Add([]byte("p: &a {listen: x}\nq: *a\n"))
	f.Add([]byte("p:\n  listen: 127.0.0.1:1\n  distribution: ring\n  replicas: 2\n  zone: a\n  zones: {x: a, \"b:2\": b}\n  servers: [\"a:1:1 x\", \"b:2:1\"]\n"))
	f.Add([]byte("p:\n  listen: /tmp/kolco.sock 0660\n  servers: [\"/tmp/mc.sock:1 a\", \"/tmp/mc2.sock:2\"]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseConfig(data)
		if err != nil {
			if !errors.Is(err, ErrBadConfig) {
				t.Fatalf("error %v does not wrap ErrBadConfig", err)
			}
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("accepted config fails Validate again: %v", err)
		}
		var b strings.Builder
		if err := cfg.Explain(&b); err != nil {
			t.Fatal(err)
		}
	})
}

// needBinary returns the path of a program an integration test needs, or
// skips the test when it is absent (fails under CI=true).
func needBinary(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s not installed (apt-get install %s)", name, name)
		}
		t.Skipf("%s not installed; skipping", name)
	}
	return p
}

// TestClientConnectionsIgnored: nutcracker ignores client_connections, so
// kolco does too; max_client_connections is kolco's limit.
func TestClientConnectionsIgnored(t *testing.T) {
	cfg, err := ParseConfig([]byte("p:\n  listen: 127.0.0.1:22121\n  client_connections: 1\n  servers: [\"127.0.0.1:11211:1\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Pools["p"].MaxClientConnections; got != 10000 {
		t.Errorf("client_connections: 1 gave a limit of %d, want the default 10000", got)
	}
}

// TestExplainBuildsPlacement: --check refuses what Start would refuse, such
// as a ring with more points than it can hold.
func TestExplainBuildsPlacement(t *testing.T) {
	cfg, err := ParseConfig([]byte("p:\n  listen: 127.0.0.1:22121\n  distribution: ring\n  vnodes: 100000000\n  servers: [\"127.0.0.1:11211:1\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := cfg.Explain(&b); err == nil || !strings.Contains(err.Error(), "points") {
		t.Fatalf("Explain of a ring of 10^8 points: %v", err)
	}
	if err := New(cfg, nil).Start(); err == nil {
		t.Fatal("Start accepted it")
	}
}
