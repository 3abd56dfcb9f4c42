package proxy

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat/twemproxy"
	"github.com/kolco-dev/kolco/internal/testproc"
	"github.com/kolco-dev/kolco/keyhash"
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
	if s.Distribution != "modula" || s.HashTag != "{}" || s.ServerConnections != 4 || s.MaxValueSize != 1<<30 || s.MaxKeys != 0 {
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
	out, err := testproc.CombinedOutput(exec.Command(bin, "-t", "-c", path))
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
	tests := []struct {
		name, yaml, pool, key string
		is                    error // a cause the error wraps, if any
	}{
		{"empty", "", "", "", nil},
		{"not yaml", "p: [", "", "", nil},
		{"unknown key", pool("  listn: x\n"), "p", "listn", ErrUnknownKey},
		{"unknown kolco key", pool("") + "kolco:\n  metrics: x\n", "", "kolco.metrics", ErrUnknownKey},
		{"value of the wrong type", pool("  timeout: soon\n"), "p", "timeout", nil},
		{"unknown health_check key", pool("  health_check: {intervl: 5}\n"), "p", "health_check.intervl", ErrUnknownKey},
		{"redis_auth in a memcached pool", pool("  redis_auth: x\n"), "p", "redis_auth", nil},
		{"bad listen", "p:\n  listen: nowhere\n  servers: [\"a:1:1\"]\n", "p", "listen", nil},
		{"unix listen bad mode", "p:\n  listen: /tmp/x.sock 0999\n  servers: [\"a:1:1\"]\n", "p", "listen", nil},
		{"unix listen mode too large", "p:\n  listen: /tmp/x.sock 01777\n  servers: [\"a:1:1\"]\n", "p", "listen", nil},
		{"one socket twice", "p:\n  listen: /tmp/x.sock 0600\n  servers: [\"a:1:1\"]\nq:\n  listen: /tmp/x.sock\n  servers: [\"a:1:1\"]\n", "q", "listen", nil},
		{"server socket path too long", "p:\n  listen: 127.0.0.1:1\n  servers: [\"/" + strings.Repeat("x", 107) + ":1\"]\n", "p", "servers", nil},
		{"unix listen path too long", "p:\n  listen: /" + strings.Repeat("x", 107) + "\n  servers: [\"a:1:1\"]\n", "p", "listen", nil},
		{"bad hash", pool("  hash: sha1\n"), "p", "hash", nil},
		{"bad hash tag", pool("  hash_tag: \"{\"\n"), "p", "hash_tag", nil},
		{"random with warm changes", pool("  distribution: random\n  warm: {enabled: true}\n"), "p", "distribution", nil},
		{"bad distribution", pool("  distribution: chaos\n"), "p", "distribution", nil},
		{"twemproxy hash with kolco algorithm", pool("  distribution: ring\n  hash: md5\n"), "p", "hash", nil},
		{"key_hash with ketama", pool("  key_hash: xxh3\n"), "p", "key_hash", nil},
		{"bad key_hash", pool("  distribution: ring\n  key_hash: sha1\n"), "p", "key_hash", keyhash.ErrUnknown},
		{"negative vnodes", pool("  distribution: ring\n  vnodes: -1\n"), "p", "vnodes", nil},
		{"negative timeout", pool("  timeout: -1\n"), "p", "timeout", nil},
		{"timeout out of range", pool("  timeout: 9223372036854775807\n"), "p", "timeout", nil},
		{"negative probe timeout", pool("  health_check: {timeout: -1}\n"), "p", "health_check.timeout", nil},
		{"no servers", "p:\n  listen: 127.0.0.1:1\n", "p", "servers", nil},
		{"bad server", "p:\n  listen: 127.0.0.1:1\n  servers: [\"a:b:1\"]\n", "p", "servers", twemproxy.ErrBadServer},
		{"zero weight", "p:\n  listen: 127.0.0.1:1\n  servers: [\"a:1:0\"]\n", "p", "servers", twemproxy.ErrBadServer},
		{"duplicate name", "p:\n  listen: 127.0.0.1:1\n  servers: [\"a:1:1 x\", \"b:1:1 x\"]\n", "p", "servers", nil},
		{"zone of a shared address", "p:\n  listen: 127.0.0.1:1\n  distribution: ring\n  replicas: 2\n  zones: {\"a:1\": z1, y: z2}\n  servers: [\"a:1:1 x\", \"a:1:1 y\"]\n", "p", "zones", nil},
		{"negative client_buffer_limit", pool("  client_buffer_limit: -1\n"), "p", "client_buffer_limit", nil},
		{"negative buffer_limit", pool("") + "kolco:\n  buffer_limit: -1\n", "", "kolco.buffer_limit", nil},
		{"rehash without eject", pool("  ejection: rehash\n"), "p", "ejection", nil},
		{"bad ejection", pool("  ejection: sometimes\n"), "p", "ejection", nil},
		{"timeout 0", pool("  timeout: 0\n"), "p", "timeout", nil},
		{"server_failure_limit 0", pool("  server_failure_limit: 0\n"), "p", "server_failure_limit", nil},
		{"server_retry_timeout 0", pool("  server_retry_timeout: 0\n"), "p", "server_retry_timeout", nil},
		{"none with replicas", "p:\n  listen: 127.0.0.1:22121\n  servers: [\"127.0.0.1:11211:1\", \"127.0.0.1:11212:1\"]\n  distribution: ring\n  replicas: 2\n  ejection: none\n", "p", "ejection", nil},
		{"bad flush_all", pool("  flush_all: yes\n"), "p", "flush_all", nil},
		{"same listen", pool("") + "q:\n  listen: 127.0.0.1:22121\n  servers: [\"127.0.0.1:11211:1\"]\n", "q", "listen", nil},
		{"bad log level", pool("") + "kolco:\n  log_level: loud\n", "", "kolco.log_level", nil},
		{"negative shutdown timeout", pool("") + "kolco:\n  shutdown_timeout: -1\n", "", "kolco.shutdown_timeout", nil},
		{"unknown warm key", pool("  warm: {windw: 5}\n"), "p", "warm.windw", ErrUnknownKey},
		{"negative warm window", pool("  warm: {window: -1}\n"), "p", "warm.window", nil},
		{"warm depth over 8", pool("  warm: {depth: 9}\n"), "p", "warm.depth", nil},
		{"negative warm quiet", pool("  warm: {quiet: -1}\n"), "p", "warm.quiet", nil},
		{"warm with replicas", "p:\n  listen: 127.0.0.1:22121\n  servers: [\"127.0.0.1:11211:1\", \"127.0.0.1:11212:1\"]\n  distribution: ring\n  replicas: 2\n  warm: {enabled: true}\n", "p", "warm.enabled", nil},
		{"sweep of an unknown server", pool("  sweep: {exclusive: [mc9]}\n"), "p", "sweep.exclusive", nil},
		{"negative sweep rate", pool("  sweep: {rate: -5}\n"), "p", "sweep.rate", nil},
		{"unknown sweep key", pool("  sweep: {servers: [x]}\n"), "p", "sweep.servers", ErrUnknownKey},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tc.yaml))
			if !errors.Is(err, ErrBadConfig) {
				t.Fatalf("got %v, want ErrBadConfig", err)
			}
			// The error must point at the culprit.
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a *ConfigError", err)
			}
			if ce.Pool != tc.pool || ce.Key != tc.key {
				t.Fatalf("error %v names pool %q key %q, want pool %q key %q", err, ce.Pool, ce.Key, tc.pool, tc.key)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Fatalf("error %v does not wrap %v", err, tc.is)
			}
		})
	}
}

// TestDefaults: a pool that sets nothing but its address and servers
// gets DefaultPoolConfig, and WithDefaults changes nothing of what it
// works on.
func TestDefaults(t *testing.T) {
	cfg, err := ParseConfig([]byte("p:\n  listen: 127.0.0.1:22121\n  servers: [\"127.0.0.1:11211:1\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultPoolConfig()
	want.Listen, want.Servers = "127.0.0.1:22121", []twemproxy.Server{{Host: "127.0.0.1", Port: 11211, Weight: 1}}
	if got := *cfg.Pools["p"]; !reflect.DeepEqual(got, want) {
		t.Errorf("pool with no settings:\n got %+v\nwant %+v", got, want)
	}
	if got := cfg.Global; !reflect.DeepEqual(got, DefaultGlobalConfig()) {
		t.Errorf("no kolco settings: %+v, want %+v", got, DefaultGlobalConfig())
	}
	raw := &PoolConfig{Distribution: "ring", AutoEjectHosts: true, ServerRetryTimeout: time.Minute}
	before := *raw
	p := raw.WithDefaults()
	if !reflect.DeepEqual(*raw, before) {
		t.Errorf("WithDefaults changed its receiver: %+v", *raw)
	}
	if p.KeyHash != keyhash.Default || p.Hash != "" || p.Ejection != EjectRehash || p.HealthCheck.Interval != time.Minute {
		t.Errorf("defaults that follow from other settings: %+v", p)
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
		`changes: cold`,
		`sweep: none`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("explain output lacks %q:\n%s", want, out)
		}
	}
}

// TestExplainProbes: --check describes the probes that run: under
// ejection none no server is marked down, and a failing one is probed
// (so that it is shown up once back), unless probes are off.
func TestExplainProbes(t *testing.T) {
	for _, tc := range []struct {
		extra  string
		probes bool
	}{
		{"", true},
		{"  health_check: {interval: 500}\n", true},
		{"  health_check: {interval: -1}\n", false},
		{"  auto_eject_hosts: true\n", true},
		{"  ejection: fail-fast\n", true},
		{"  ejection: fail-fast\n  health_check: {interval: -1}\n", false},
	} {
		t.Run(strings.TrimSpace(tc.extra), func(t *testing.T) {
			cfg, err := ParseConfig([]byte("p:\n  listen: 127.0.0.1:1\n" + tc.extra + "  servers: [\"127.0.0.1:2:1\"]\n"))
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			if err := cfg.Explain(&b); err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(b.String(), "probed"); got != tc.probes {
				t.Errorf("ejection %s: describes probes %v, want %v:\n%s", cfg.Pools["p"].Ejection, got, tc.probes, b.String())
			}
		})
	}
}

// FuzzParseConfig checks that no input panics the parser and that every
// configuration it accepts validates again unchanged and can be explained.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(nutcrackerYAML))
	f.Add([]byte("p:\n  listen: 127.0.0.1:1\n  servers: [\"a:1:1 x\"]\n  ejection: fail-fast\n"))
	f.Add([]byte("kolco: {metrics_listen: \"127.0.0.1:0\"}\np: {listen: \"[::1]:1\", servers: [\"::1:2:3\"]}\n"))
	// kolco's proxy-wide keys, and one address under two names.
	f.Add([]byte("kolco: {stats_listen: \"0.0.0.0:22222\", stats_interval: 1000, admin_listen: \":22223\", buffer_limit: 1048576, threads: 2}\n" +
		"p: {listen: \"127.0.0.1:1\", client_buffer_limit: 65536, max_keys: 0, servers: [\"a:1:1 x\", \"a:1:1 y\"]}\n"))
	f.Add([]byte("p: &a {listen: x}\nq: *a\n"))
	f.Add([]byte("p:\n  listen: 127.0.0.1:1\n  distribution: ring\n  replicas: 2\n  zone: a\n  zones: {x: a, \"b:2\": b}\n  servers: [\"a:1:1 x\", \"b:2:1\"]\n"))
	f.Add([]byte("p:\n  listen: /tmp/kolco.sock 0660\n  servers: [\"/tmp/mc.sock:1 a\", \"/tmp/mc2.sock:2\"]\n"))
	f.Add([]byte(nutcrackerRedisYAML + "  redis_client_auth: x\n  redis_server_auth: {server1: y, \"127.0.0.1:6381\": \"\"}\n"))
	f.Add([]byte("p:\n  listen: 127.0.0.1:1\n  distribution: jump\n  warm: {window: 5000, depth: 3, quiet: 10}\n  sweep: {exclusive: [a, \"*\"], rate: 10}\n  servers: [\"a:1:1\"]\n"))
	// One exclusive name alone; random; a misspelt nested key, a tab and a
	// value of the wrong kind, whose errors name their lines.
	f.Add([]byte("p:\n  listen: 127.0.0.1:1\n  distribution: ring\n  sweep: {exclusive: \"*\"}\n  servers: [\"a:1:1\"]\n"))
	f.Add([]byte("p:\n  listen: 127.0.0.1:1\n  distribution: random\n  auto_eject_hosts: true\n  servers: [\"a:1:1\", \"b:1:1\"]\n"))
	f.Add([]byte("p:\n  listen: 127.0.0.1:1\n  health_check:\n    intervl: 5\n\t timeout: [1]\n  servers: [\"a:1:1\"]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseConfig(data)
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a *ConfigError", err)
			}
			return
		}
		before := *cfg.Pools[cfg.PoolNames()[0]]
		if err := cfg.Validate(); err != nil {
			t.Fatalf("accepted config fails Validate again: %v", err)
		}
		if after := *cfg.Pools[cfg.PoolNames()[0]]; !reflect.DeepEqual(after, before) {
			t.Fatalf("Validate changed the config:\n%+v\n%+v", before, after)
		}
		if d := cfg.WithDefaults(); !reflect.DeepEqual(d, cfg) {
			t.Fatalf("an accepted config lacks defaults:\n%+v\n%+v", cfg, d)
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
	var ce *ConfigError
	if err := cfg.Explain(&b); !errors.As(err, &ce) || ce.Pool != "p" || !errors.Is(err, kolco.ErrBadConfig) {
		t.Fatalf("Explain of a ring of 10^8 points: %v, want the ring's refusal for pool p", err)
	}
	if err := New(cfg, nil).Start(); !errors.As(err, &ce) || ce.Pool != "p" || !errors.Is(err, kolco.ErrBadConfig) {
		t.Fatalf("Start of a ring of 10^8 points: %v, want the ring's refusal for pool p", err)
	}
}

// TestWarmDefaults: warm changes are on by default for kolco's
// distributions with one copy, off for twemproxy's (nutcracker's
// behaviour unless asked) and with replicas; the settings read as given.
func TestWarmDefaults(t *testing.T) {
	for _, c := range []struct {
		name, extra string
		on          bool
	}{
		{"ketama", "", false},
		{"modula", "  distribution: modula\n", false},
		{"ketama asked", "  warm: {enabled: true}\n", true},
		{"ring", "  distribution: ring\n", true},
		{"jump", "  distribution: jump\n", true},
		{"ring turned off", "  distribution: ring\n  warm: {enabled: false}\n", false},
		{"ring with replicas", "  distribution: ring\n  replicas: 2\n", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte("p:\n  listen: 127.0.0.1:22121\n  servers: [\"127.0.0.1:11211:1 a\", \"127.0.0.1:11212:1 b\"]\n" + c.extra))
			if err != nil {
				t.Fatal(err)
			}
			if w := cfg.Pools["p"].Warm; w.on() != c.on || w.Window != 10*time.Minute || w.Depth != 2 || w.Quiet != 1000 {
				t.Errorf("%+v (enabled %v), want enabled %v", w, w.on(), c.on)
			}
		})
	}
	cfg, err := ParseConfig([]byte("p:\n  listen: 127.0.0.1:22121\n  distribution: rendezvous\n" +
		"  warm: {window: 1500, depth: 3, quiet: 7}\n  sweep: {exclusive: [a, \"127.0.0.1:11212\"], rate: 50}\n" +
		"  servers: [\"127.0.0.1:11211:1 a\", \"127.0.0.1:11212:1 b\", \"127.0.0.1:11213:1 c\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Pools["p"]
	if w := p.Warm; !w.on() || w.Window != 1500*time.Millisecond || w.Depth != 3 || w.Quiet != 7 || p.Sweep.Rate != 50 {
		t.Errorf("%+v, %+v", w, p.Sweep)
	}
	for i, want := range []bool{true, true, false} {
		if p.exclusive(p.nodes()[i]) != want {
			t.Errorf("server %d exclusive: %v, want %v", i, !want, want)
		}
	}
}

// TestServerLinesParsedOnce: a configuration's server lines are parsed
// where the file is read (compat.ReadNutcracker), once, into typed
// servers; no file of the proxy, nor the membership file source, parses
// one again, and none says a line is "valid: checked" to skip an error.
// The test counts the calls of twemproxy.ParseServer in their source.
func TestServerLinesParsedOnce(t *testing.T) {
	count := func(dir string) (calls int, skipped []string) {
		names, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, name := range names {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			calls += strings.Count(string(b), "twemproxy.ParseServer(")
			if strings.Contains(string(b), "valid: checked") || strings.Contains(string(b), "valid: validated") {
				skipped = append(skipped, name)
			}
		}
		return calls, skipped
	}
	for _, dir := range []string{".", "../membership"} {
		if n, skipped := count(dir); n != 0 || len(skipped) > 0 {
			t.Errorf("%s: %d parses of a server line; %v skip an error as checked", dir, n, skipped)
		}
	}
	cfg, err := ParseConfig([]byte("p:\n  listen: 127.0.0.1:1\n  servers: [\"10.0.0.1:11211:2 a\", \"/tmp/m.sock:1\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []twemproxy.Server{{Host: "10.0.0.1", Port: 11211, Weight: 2, Name: "a"}, {Host: "/tmp/m.sock", Weight: 1}}
	if got := cfg.Pools["p"].Servers; !reflect.DeepEqual(got, want) {
		t.Errorf("servers %+v, want %+v", got, want)
	}
}
