package proxy

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/proxy/redis"
)

// nutcrackerRedisYAML is a Redis pool as twemproxy's sample configuration
// writes one (conf/nutcracker.yml of twemproxy 0.5, pool "beta"), with
// redis_auth and redis_db.
const nutcrackerRedisYAML = `
beta:
  listen: 127.0.0.1:22122
  hash: fnv1a_64
  hash_tag: "{}"
  distribution: ketama
  auto_eject_hosts: false
  timeout: 400
  redis: true
  redis_auth: secret
  redis_db: 3
  servers:
   - 127.0.0.1:6380:1 server1
   - 127.0.0.1:6381:1 server2
   - 127.0.0.1:6382:1 server3
   - 127.0.0.1:6383:1 server4
`

func TestParseNutcrackerRedisConfig(t *testing.T) {
	cfg, err := ParseConfig([]byte(nutcrackerRedisYAML))
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Pools["beta"]
	if !p.Redis || p.RedisDB != 3 || p.Ejection != EjectNone || p.MaxValueSize != redis.DefaultMaxBulk {
		t.Errorf("beta: %+v", p)
	}
	if got := p.clientPassword(); got != "secret" {
		t.Errorf("client password %q, want redis_auth's", got)
	}
	if got := p.serverPassword(p.nodes()[0]); got != "secret" {
		t.Errorf("server password %q, want redis_auth's", got)
	}
}

// TestRedisPasswords: redis_client_auth replaces redis_auth for clients,
// redis_server_auth for the servers it names, by name or address; an
// empty one sends none.
func TestRedisPasswords(t *testing.T) {
	cfg, err := ParseConfig([]byte(nutcrackerRedisYAML + `  redis_client_auth: mine
  redis_server_auth: {server1: one, "127.0.0.1:6381": two, server3: ""}
`))
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Pools["beta"]
	if got := p.clientPassword(); got != "mine" {
		t.Errorf("client password %q, want redis_client_auth's", got)
	}
	for i, want := range []string{"one", "two", "", "secret"} {
		if got := p.serverPassword(p.nodes()[i]); got != want {
			t.Errorf("server %d: password %q, want %q", i+1, got, want)
		}
	}
}

// TestRedisConfigErrors: the settings that mean nothing for Redis, or
// Redis's outside a Redis pool, are refused with the key at fault.
func TestRedisConfigErrors(t *testing.T) {
	const servers = "  servers: [\"127.0.0.1:6379:1 a\", \"127.0.0.1:6380:1 b\"]\n"
	pool := func(extra string) string {
		return "p:\n  listen: 127.0.0.1:22121\n  redis: true\n" + servers + extra
	}
	memcached := "p:\n  listen: 127.0.0.1:22121\n" + servers
	for _, tc := range []struct{ name, yaml, key string }{
		{"redis_client_auth in a memcached pool", memcached + "  redis_client_auth: x\n", "redis_client_auth"},
		{"redis_server_auth in a memcached pool", memcached + "  redis_server_auth: {a: x}\n", "redis_server_auth"},
		{"negative redis_db", pool("  redis_db: -1\n"), "redis_db"},
		{"replicas", pool("  distribution: ring\n  replicas: 2\n  ejection: fail-fast\n"), "replicas"},
		{"zones", pool("  distribution: ring\n  zones: {a: z1, b: z2}\n"), "zones"},
		{"value over the server's limit", pool("  max_value_size: 1073741824\n"), "max_value_size"},
		{"password for no server", pool("  redis_server_auth: {c: x}\n"), "redis_server_auth"},
		{"password twice", pool("  redis_server_auth: {a: x, \"127.0.0.1:6379\": y}\n"), "redis_server_auth"},
		{"warm changes", pool("  distribution: jump\n  warm: {enabled: true}\n"), "warm.enabled"},
		{"the sweep", pool("  distribution: jump\n  sweep: {exclusive: [\"*\"]}\n"), "sweep.exclusive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tc.yaml))
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Key != tc.key {
				t.Fatalf("got %v, want a *ConfigError for %s", err, tc.key)
			}
		})
	}
}

// TestRedisChangesCold: a Redis pool under one of kolco's distributions,
// where a memcached pool's changes are warm by default, has cold changes,
// and --check says so.
func TestRedisChangesCold(t *testing.T) {
	cfg, err := ParseConfig([]byte("p:\n  listen: 127.0.0.1:22121\n  redis: true\n  distribution: jump\n  servers: [\"127.0.0.1:6379:1 a\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Pools["p"].WithDefaults().Warm.on() {
		t.Error("warm changes on in a Redis pool")
	}
	var b strings.Builder
	if err := cfg.Explain(&b); err != nil || !strings.Contains(b.String(), "  changes: cold") {
		t.Errorf("--check: %v\n%s", err, b.String())
	}
}

// TestStoreExplained: --check of a store pool says its changes move the
// keys, paced by the clients' latency under the rate and timeout
// configured, in batches the mover sizes.
func TestStoreExplained(t *testing.T) {
	cfg, err := ParseConfig([]byte("p:\n  listen: 127.0.0.1:22121\n  redis: true\n  distribution: jump\n  store: {enabled: true, rate: 300}\n  servers: [\"127.0.0.1:6379:1 a\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := cfg.Explain(&b); err != nil || !strings.Contains(b.String(), "  changes: a store's: ") ||
		!strings.Contains(b.String(), "paced to keep the clients' p99 under twice its value before the move (at least 1 ms), at most 300 keys a second from each server, batches sized from their measured time") {
		t.Errorf("--check: %v\n%s", err, b.String())
	}
}

// TestRedisServerAuthOfSourcedPool: redis_server_auth naming a server the
// servers list lacks is an error in a static pool and allowed in a pool on
// a membership source, whose servers come and go.
func TestRedisServerAuthOfSourcedPool(t *testing.T) {
	const pool = "p:\n  listen: 127.0.0.1:22121\n  redis: true\n  servers: [\"127.0.0.1:6379:1 a\"]\n  redis_server_auth: {b: x}\n"
	var ce *ConfigError
	if _, err := ParseConfig([]byte(pool)); !errors.As(err, &ce) || ce.Key != "redis_server_auth" {
		t.Errorf("static pool: %v, want a *ConfigError for redis_server_auth", err)
	}
	if _, err := ParseConfig([]byte(pool + "  membership: {file: {path: members.yml}}\n")); err != nil {
		t.Errorf("pool on a source: %v", err)
	}
}

// TestSentinelConfig: a Sentinel pool is a Redis pool of named servers,
// explained by --check; anything else is refused, naming the fix.
func TestSentinelConfig(t *testing.T) {
	const head = "p:\n  listen: 127.0.0.1:22121\n"
	cfg, err := ParseConfig([]byte(head + "  redis: true\n  membership: {sentinel: {sentinels: [\"127.0.0.1:26379\"], interval: 250}}\n  replica_reads: {enabled: true}\n  servers: [\"127.0.0.1:6379:1 shard-a\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := cfg.Explain(&b); err != nil || !strings.Contains(b.String(), "each server is the Sentinel master of its name") || !strings.Contains(b.String(), "asked every 250 ms") ||
		!strings.Contains(b.String(), "reads: from a replica no more than 1000 ms behind") {
		t.Errorf("--check: %v\n%s", err, b.String())
	}
	cfg, err = ParseConfig([]byte(head + "  redis: true\n  membership: {sentinel: {sentinels: [\"127.0.0.1:26379\"], tls: {ca_file: ca.pem, cert_file: c.pem, key_file: k.pem}}}\n  servers: [\"127.0.0.1:6379:1 shard-a\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := cfg.Explain(&b); err != nil || !strings.Contains(b.String(), "the Sentinels are reached over TLS, verified against ca.pem, presenting c.pem") {
		t.Errorf("--check of Sentinels over TLS: %v\n%s", err, b.String())
	}
	for yaml, want := range map[string]string{
		"  membership: {sentinel: {sentinels: [\"127.0.0.1:26379\"]}}\n  servers: [\"127.0.0.1:6379:1 a\"]\n":                                                                            "set redis: true",
		"  redis: true\n  membership: {sentinel: {sentinels: []}}\n  servers: [\"127.0.0.1:6379:1 a\"]\n":                                                                                "no sentinels",
		"  redis: true\n  membership: {sentinel: {sentinels: [\"127.0.0.1\"]}}\n  servers: [\"127.0.0.1:6379:1 a\"]\n":                                                                   "want host:port",
		"  redis: true\n  membership: {sentinel: {sentinels: [\"127.0.0.1:26379\"]}}\n  servers: [\"127.0.0.1:6379:1\"]\n":                                                               "has no name",
		"  redis: true\n  membership: {sentinel: {sentinels: [\"127.0.0.1:26379\"], username: u}}\n  servers: [\"127.0.0.1:6379:1 a\"]\n":                                                "a username needs a password",
		"  redis: true\n  membership: {sentinel: {sentinels: [\"127.0.0.1:26379\"], timeout: -1}}\n  servers: [\"127.0.0.1:6379:1 a\"]\n":                                                "must not be negative",
		"  redis: true\n  replica_reads: {enabled: true}\n  servers: [\"127.0.0.1:6379:1 a\"]\n":                                                                                         "applies to Redis pools on Sentinel",
		"  replica_reads: {enabled: true}\n  servers: [\"127.0.0.1:6379:1 a\"]\n":                                                                                                        "applies to Redis pools on Sentinel",
		"  redis: true\n  store: {enabled: true}\n  replica_reads: {enabled: true}\n  membership: {sentinel: {sentinels: [\"127.0.0.1:26379\"]}}\n  servers: [\"127.0.0.1:6379:1 a\"]\n": "read a store from its primaries",
		"  redis: true\n  replica_reads: {max_lag: -5}\n  servers: [\"127.0.0.1:6379:1 a\"]\n":                                                                                           "replica_reads.max_lag",
		"  redis: true\n  membership: {sentinel: {sentinels: [\"127.0.0.1:26379\"], tls: {cert_file: c.pem}}}\n  servers: [\"127.0.0.1:6379:1 a\"]\n":                                    "needs both cert_file and key_file",
		"  redis: true\n  membership: {sentinel: {sentinels: [\"127.0.0.1:26379\"], tls: {server_name: \"a b\"}}}\n  servers: [\"127.0.0.1:6379:1 a\"]\n":                                "not a name to verify",
		"  redis: true\n  membership: {sentinel: {sentinels: [\"127.0.0.1:26379\"], tls: {ca: x.pem}}}\n  servers: [\"127.0.0.1:6379:1 a\"]\n":                                           "did you mean ca_file?",
	} {
		if _, err := ParseConfig([]byte(head + yaml)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", yaml, err, want)
		}
	}
}

// TestRedisServerUser: with redis_server_user the proxy authenticates to
// a redis-server whose default user is off as that ACL user, and serves;
// without it the server's refusal reaches the client, as nutcracker's
// would. A user without a password, or with a space, is refused.
func TestRedisServerUser(t *testing.T) {
	t.Parallel()
	r := startRedis(t, 0, "--user", "kolco", "on", ">s3cret", "~*", "&*", "+@all", "--user", "default", "off")
	base := "p:\n  listen: 127.0.0.1:0\n  redis: true\n  timeout: 5000\n  redis_server_auth: {a: s3cret}\n  servers: [\"" + r.addr + ":1 a\"]\n"
	s := startProxy(t, base+"  redis_server_user: kolco\n")
	c := dialRedis(t, s.Addr("p").String())
	if got := c.do("SET", "k", "v"); got != "+OK\r\n" {
		t.Errorf("as the ACL user: SET gets %q", got)
	}
	s2 := startProxy(t, base)
	if got := dialRedis(t, s2.Addr("p").String()).do("SET", "k", "v"); !strings.HasPrefix(got, "-") {
		t.Errorf("as the default user, which is off: SET gets %q, want the server's refusal", got)
	}
	for yaml, want := range map[string]string{
		"  redis: true\n  redis_server_user: kolco\n  servers: [\"127.0.0.1:6379:1 a\"]\n":                    "authenticates with a password",
		"  redis: true\n  redis_auth: x\n  redis_server_user: \"a b\"\n  servers: [\"127.0.0.1:6379:1 a\"]\n": "has no spaces",
		"  redis_server_user: kolco\n  servers: [\"127.0.0.1:6379:1 a\"]\n":                                   "applies to Redis pools only",
	} {
		if _, err := ParseConfig([]byte("p:\n  listen: 127.0.0.1:22121\n" + yaml)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", yaml, err, want)
		}
	}
}

// TestStoreMovesAsACLUser: a store's MIGRATE authenticates to the new
// server as redis_server_user (AUTH2): a change of a store whose servers
// have the default user off moves every key.
func TestStoreMovesAsACLUser(t *testing.T) {
	t.Parallel()
	acl := []string{"--user", "kolco", "on", ">s3cret", "~*", "&*", "+@all", "--user", "default", "off"}
	rs := []*redisServer{startRedis(t, 0, acl...), startRedis(t, 0, acl...)}
	extra := "  distribution: ring\n  store: {enabled: true}\n  redis_auth: s3cret\n  redis_server_user: kolco\n"
	s := startProxy(t, redisPoolYAML(extra, rs[0]))
	c := dialRedis(t, s.Addr("p").String())
	c.do("AUTH", "s3cret")
	for i := range 200 {
		if got := c.do("SET", fmt.Sprint("k:", i), "v"); got != "+OK\r\n" {
			t.Fatal(got)
		}
	}
	reload(t, s, redisPoolYAML(extra, rs...))
	p := s.testPool("p")
	eventually(t, "the move to end", func() bool { return moveOf(p.place.Load()) == nil })
	for i := range 200 {
		if got := c.do("GET", fmt.Sprint("k:", i)); got != "$1\r\nv\r\n" {
			t.Fatalf("k:%d after the move: %q", i, got)
		}
	}
	if moved := p.stats.storeMoved.Load(); moved == 0 {
		t.Error("no key moved to the second server")
	}
}

// TestStoreNeedsAKeptHistory: a store whose distribution places keys by
// the order of changes is refused on a source that keeps no history (a
// file, DNS, Sentinel): a proxy started again there places keys by the
// changes it sees from then, apart from the fleet (a fault schedule's
// seed 44 of the long run, binomial on a file source: after a handover
// the new process placed by another fingerprint than its peers, its
// store's move waited for them for good, and reads went to servers
// without the keys - 6 keys not linearizable, 1 acknowledged write
// unreadable). On etcd, which keeps the history, and with a distribution
// whose placement is the servers', it is accepted.
func TestStoreNeedsAKeptHistory(t *testing.T) {
	const head = "p:\n  listen: 127.0.0.1:22121\n  redis: true\n  store: {enabled: true}\n  servers: [\"127.0.0.1:6379:1 a\"]\n"
	for _, c := range []struct {
		name, yaml string
		refused    bool
	}{
		{"jump on a file", "  distribution: jump\n  membership: {file: {path: members.yml}}\n", true},
		{"binomial on DNS", "  distribution: binomial\n  membership: {dns: {name: _redis._tcp.example.}}\n", true},
		{"anchor on Sentinel", "  distribution: anchor\n  membership: {sentinel: {sentinels: [\"127.0.0.1:26379\"]}}\n", true},
		{"jump on etcd", "  distribution: jump\n  membership: {etcd: {endpoints: [\"http://127.0.0.1:2379\"], prefix: /kolco/p/}}\n", false},
		{"ring on a file", "  distribution: ring\n  membership: {file: {path: members.yml}}\n", false},
		{"jump on its servers", "  distribution: jump\n", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(head + c.yaml))
			var ce *ConfigError
			switch {
			case c.refused && (!errors.As(err, &ce) || ce.Key != "store.enabled"):
				t.Errorf("%v, want store.enabled refused", err)
			case !c.refused && err != nil:
				t.Errorf("refused: %v", err)
			}
		})
	}
}

// TestStoreSettingsRefused: a negative rate, batch, latency bound or
// MIGRATE timeout is refused, naming the setting.
func TestStoreSettingsRefused(t *testing.T) {
	const head = "p:\n  listen: 127.0.0.1:22121\n  redis: true\n  distribution: ring\n  servers: [\"127.0.0.1:6379:1 a\"]\n"
	for _, key := range []string{"rate", "batch", "latency_bound", "migrate_timeout"} {
		t.Run(key, func(t *testing.T) {
			_, err := ParseConfig([]byte(head + "  store: {enabled: true, " + key + ": -1}\n"))
			var ce *ConfigError
			if !errors.Is(err, ErrBadConfig) || !errors.As(err, &ce) || ce.Key != "store."+key {
				t.Errorf("%v, want store.%s refused", err, key)
			}
		})
	}
}
