package main

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat/envoy"
	"github.com/kolco-dev/kolco/compat/haproxy"
	"github.com/kolco-dev/kolco/compat/nginx"
	"github.com/kolco-dev/kolco/compat/twemproxy"
	"github.com/kolco-dev/kolco/proxy"
)

var compatKeys = []string{"user:1", "user:2", "{tag}a", "{tag}b", "ключ", "x"}

func expectLines(t *testing.T, p kolco.Placement) string {
	t.Helper()
	var b strings.Builder
	for _, k := range compatKeys {
		n, err := p.Locate(k)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(k + "\t" + n.ID + "\n")
	}
	return b.String()
}

func TestLocateTwemproxyConfigAndServers(t *testing.T) {
	lines := []string{"127.0.0.1:11211:1 alpha", "127.0.0.1:11212:2", "10.0.0.3:11211:1"}
	var servers []twemproxy.Server
	for _, l := range lines {
		s, err := twemproxy.ParseServer(l)
		if err != nil {
			t.Fatal(err)
		}
		servers = append(servers, s)
	}
	pool, err := twemproxy.New(twemproxy.Config{Hash: "murmur", HashTag: "{}"}, servers)
	if err != nil {
		t.Fatal(err)
	}
	want := expectLines(t, pool)
	in := strings.Join(compatKeys, "\n") + "\n"

	code, out, errs := runCLI(t, in, "locate", "--algo", "twemproxy", "--hash", "murmur", "--hash-tag", "{}", "--servers", strings.Join(lines, ","))
	if code != 0 || out != want {
		t.Errorf("--servers: exit %d (%s), output\n%s\nwant\n%s", code, errs, out, want)
	}

	yml := "alpha:\n  listen: 127.0.0.1:22121\n  hash: murmur\n  hash_tag: \"{}\"\n  distribution: ketama\n  servers:\n" +
		"   - 127.0.0.1:11211:1 alpha\n   - 127.0.0.1:11212:2\n   - 10.0.0.3:11211:1\n"
	file := filepath.Join(t.TempDir(), "nutcracker.yml")
	os.WriteFile(file, []byte(yml), 0o644)
	code, out, errs = runCLI(t, in, "locate", "--algo", "twemproxy", "--config", file)
	if code != 0 || out != want {
		t.Errorf("--config: exit %d (%s), output\n%s\nwant\n%s", code, errs, out, want)
	}
}

func TestLocateNginxUpstream(t *testing.T) {
	servers := []nginx.Server{{Addr: "127.0.0.1:19001", Weight: 2}, {Addr: "127.0.0.1:19002"}}
	c, err := nginx.NewConsistent(servers)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "upstream.conf")
	os.WriteFile(file, []byte("upstream u {\n  hash $arg_k consistent;\n  server 127.0.0.1:19001 weight=2;\n  server 127.0.0.1:19002;\n}\n"), 0o644)
	code, out, errs := runCLI(t, strings.Join(compatKeys, "\n")+"\n", "locate", "--algo", "nginx", "--config", file)
	if want := expectLines(t, c); code != 0 || out != want {
		t.Errorf("exit %d (%s), output\n%s\nwant\n%s", code, errs, out, want)
	}
}

func TestLocateEnvoy(t *testing.T) {
	hosts := []envoy.Host{{Key: "10.0.0.1:80", Addr: "10.0.0.1:80", Weight: 2}, {Key: "10.0.0.2:80", Addr: "10.0.0.2:80", Weight: 1}}
	for _, dist := range []string{"ring_hash", "maglev"} {
		t.Run(dist, func(t *testing.T) {
			var p kolco.Placement
			var err error
			if dist == "maglev" {
				p, err = envoy.NewMaglev(hosts, envoy.MaglevConfig{})
			} else {
				p, err = envoy.NewRing(hosts, envoy.RingConfig{})
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, want := locateOutput(t, "--algo", "envoy", "--distribution", dist, "--servers", "10.0.0.1:80=2,10.0.0.2:80"), expectLines(t, p); got != want {
				t.Errorf("output\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func TestLocateCompatErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"kolco flags refused", []string{"--algo", "twemproxy", "--nodes", "a"}, 2, "does not apply"},
		{"no servers", []string{"--algo", "twemproxy"}, 2, "needs --config"},
		{"bad server line", []string{"--algo", "twemproxy", "--servers", "nohost"}, 2, "bad server"},
		{"no config", []string{"--algo", "nginx"}, 2, "needs --config"},
		{"no libmemcached servers", []string{"--algo", "libmemcached"}, 2, "needs --servers"},
		{"no pymemcache servers", []string{"--algo", "pymemcache"}, 2, "needs --servers"},
		{"no cassandra ring", []string{"--algo", "cassandra"}, 2, "needs --config"},
		{"duplicate goredis shard", []string{"--algo", "goredis", "--servers", "a=h:1,a=h:2"}, 2, "duplicate"},
		{"inapplicable hash", []string{"--algo", "nginx", "--config", "x", "--hash", "md5"}, 2, "does not apply"},
		{"config overrides flags", []string{"--algo", "twemproxy", "--config", "x", "--hash", "md5"}, 2, "--config and --hash exclude each other"},
		{"config and servers", []string{"--algo", "twemproxy", "--config", "x", "--servers", "a:1:1"}, 2, "--config and --servers exclude each other"},
		{"pool without config", []string{"--algo", "twemproxy", "--servers", "a:1:1", "--pool", "p"}, 2, "needs --config"},
		{"pool for redis", []string{"--algo", "redis", "--config", "x", "--pool", "p"}, 2, "--pool does not apply to --algo redis"},
		{"backend for nginx", []string{"--algo", "nginx", "--config", "x", "--backend", "b"}, 2, "--backend does not apply to --algo nginx"},
		{"pool and backend", []string{"--algo", "haproxy", "--config", "x", "--pool", "a", "--backend", "b"}, 2, "exclude each other"},
		{"missing config file", []string{"--algo", "nginx", "--config", "/nonexistent/nginx.conf"}, 1, "no such file"},
		{"bad envoy weight", []string{"--algo", "envoy", "--servers", "a=0"}, 2, "positive integer"},
		{"bad envoy distribution", []string{"--algo", "envoy", "--servers", "a", "--distribution", "x"}, 2, "ring_hash or maglev"},
		{"bad goredis shard", []string{"--algo", "goredis", "--servers", "a"}, 2, "name=host:port"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, errs := runCLI(t, "k\n", append([]string{"locate"}, c.args...)...)
			if code != c.code || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.msg) {
				t.Errorf("exit %d, stderr %q; want exit %d naming %q", code, errs, c.code, c.msg)
			}
		})
	}
}

// wholeHAProxy has two backends whose servers share names: read as one
// backend, it would be refused as duplicate nodes.
const wholeHAProxy = `global
    maxconn 100
defaults
    mode http
    hash-type consistent
frontend fe
    bind 127.0.0.1:8080
    default_backend web
backend web
    balance hdr(X-Key)
    server s1 10.0.0.1:80
    server s2 10.0.0.2:80 weight 3
backend api
    balance hdr(X-Key)
    server s1 10.0.1.1:80
    server s2 10.0.1.2:80
listen stats
    bind 127.0.0.1:8404
    stats enable
`

const wholeNginx = `events { }
http {
    upstream cache { hash $arg_k consistent; server 127.0.0.1:19001 weight=2; server 127.0.0.1:19002; }
    upstream app { server 127.0.0.1:19003; server 127.0.0.1:19004 backup; }
    server { listen 127.0.0.1:8080; location / { proxy_pass http://cache; } }
}
`

// TestLocateWholeConfig checks that a whole haproxy.cfg or nginx.conf is
// read with a selector, that the system's own word and --pool choose
// alike, and that a missing or unknown choice lists the names.
func TestLocateWholeConfig(t *testing.T) {
	dir := t.TempDir()
	haCfg, ngxCfg := filepath.Join(dir, "haproxy.cfg"), filepath.Join(dir, "nginx.conf")
	os.WriteFile(haCfg, []byte(wholeHAProxy), 0o644)
	os.WriteFile(ngxCfg, []byte(wholeNginx), 0o644)
	web, err := haproxy.New([]haproxy.Server{{Name: "s1", Addr: "10.0.0.1:80", Weight: 1}, {Name: "s2", Addr: "10.0.0.2:80", Weight: 3}},
		haproxy.HashType{Type: haproxy.Consistent, Avalanche: true})
	if err != nil {
		t.Fatal(err)
	}
	cache, err := nginx.NewConsistent([]nginx.Server{{Addr: "127.0.0.1:19001", Weight: 2}, {Addr: "127.0.0.1:19002"}})
	if err != nil {
		t.Fatal(err)
	}
	in := strings.Join(compatKeys, "\n") + "\n"
	for _, c := range []struct {
		name string
		args []string
		want kolco.Placement
	}{
		{"haproxy --backend", []string{"--algo", "haproxy", "--config", haCfg, "--backend", "web"}, web},
		{"haproxy --pool", []string{"--algo", "haproxy", "--config", haCfg, "--pool", "web"}, web},
		{"nginx --upstream", []string{"--algo", "nginx", "--config", ngxCfg, "--upstream", "cache"}, cache},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCLI(t, in, append([]string{"locate"}, c.args...)...)
			if want := expectLines(t, c.want); code != 0 || out != want {
				t.Errorf("exit %d (%s), output\n%s\nwant\n%s", code, errs, out, want)
			}
		})
	}
	for _, c := range []struct {
		name string
		args []string
		msg  string
	}{
		{"no backend chosen", []string{"--algo", "haproxy", "--config", haCfg}, "2 backends (web, api): choose one with --backend"},
		{"unknown backend", []string{"--algo", "haproxy", "--config", haCfg, "--backend", "db"}, `no backend "db" (backends: web, api)`},
		{"no upstream chosen", []string{"--algo", "nginx", "--config", ngxCfg}, "2 upstreams (cache, app): choose one with --upstream"},
		{"round-robin upstream", []string{"--algo", "nginx", "--config", ngxCfg, "--upstream", "app"}, "backup"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, errs := runCLI(t, in, append([]string{"locate"}, c.args...)...)
			if code == 0 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.msg) {
				t.Errorf("exit %d, stderr %q; want one line naming %q", code, errs, c.msg)
			}
		})
	}
}

// locateOutput runs kolco locate over compatKeys and returns its output.
func locateOutput(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errs := runCLI(t, strings.Join(compatKeys, "\n")+"\n", append([]string{"locate"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	return out
}

// TestLocateTwemproxyAsProxyReads checks every twemproxy pool of a
// configuration kolco proxy runs - its own keys, unix sockets, names,
// weights, modula and hash tags - against the placement built from the
// proxy's own reading of the file: locate reads nutcracker.yml without the
// proxy, and must place as it does.
func TestLocateTwemproxyAsProxyReads(t *testing.T) {
	yml := `kolco:
  metrics_listen: 127.0.0.1:0
alpha:
  listen: 127.0.0.1:22121
  hash: murmur
  hash_tag: "{}"
  auto_eject_hosts: true
  server_retry_timeout: 2000
  servers:
   - 127.0.0.1:11211:1 first
   - 127.0.0.1:11212:2
   - /tmp/kolco-a.sock:3
   - /tmp/kolco-b.sock:1 named
beta:
  listen: 127.0.0.1:22122
  distribution: modula
  hash: crc32a
  servers:
   - 10.0.0.1:11211:1
   - 10.0.0.2:011212:3
   - /tmp/kolco-c.sock:2
gamma:
  listen: 127.0.0.1:22123
  distribution: ring
  vnodes: 40
  servers:
   - 10.0.1.1:11211:1
`
	file := filepath.Join(t.TempDir(), "nutcracker.yml")
	os.WriteFile(file, []byte(yml), 0o644)
	cfg, err := proxy.ParseConfig([]byte(yml))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"alpha", "beta"} {
		t.Run(name, func(t *testing.T) {
			pool := cfg.Pools[name]
			p, err := twemproxy.New(twemproxy.Config{Hash: pool.Hash, HashTag: pool.HashTag, Distribution: pool.Distribution}, pool.Servers)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := locateOutput(t, "--algo", "twemproxy", "--config", file, "--pool", name), expectLines(t, p); got != want {
				t.Errorf("output\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestOnlyProxyImportsProxy checks that of the command's files only the
// proxy subcommand's (proxy.go and proxy_*.go, such as kolco proxy move)
// import package proxy: locate and the others build their placements from
// the library floors.
func TestOnlyProxyImportsProxy(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) < 3 {
		t.Fatalf("the command's files: %v, %v", files, err)
	}
	for _, f := range files {
		if f == "proxy.go" || strings.HasPrefix(f, "proxy_") || strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range parsed.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); strings.HasPrefix(p, "github.com/kolco-dev/kolco/proxy") {
				t.Errorf("%s imports %s", f, p)
			}
		}
	}
}
