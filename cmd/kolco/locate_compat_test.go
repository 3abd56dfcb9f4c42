package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat/envoy"
	"github.com/kolco-dev/kolco/compat/nginx"
	"github.com/kolco-dev/kolco/compat/twemproxy"
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
		code, out, errs := runCLI(t, strings.Join(compatKeys, "\n")+"\n", "locate", "--algo", "envoy", "--distribution", dist, "--servers", "10.0.0.1:80=2,10.0.0.2:80")
		if want := expectLines(t, p); code != 0 || out != want {
			t.Errorf("%s: exit %d (%s), output\n%s\nwant\n%s", dist, code, errs, out, want)
		}
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
		{"bad server line", []string{"--algo", "twemproxy", "--servers", "nohost"}, 1, "bad server"},
		{"no config", []string{"--algo", "nginx"}, 2, "needs --config"},
		{"no libmemcached servers", []string{"--algo", "libmemcached"}, 2, "needs --servers"},
		{"no pymemcache servers", []string{"--algo", "pymemcache"}, 2, "needs --servers"},
		{"no cassandra ring", []string{"--algo", "cassandra"}, 2, "needs --config"},
		{"duplicate goredis shard", []string{"--algo", "goredis", "--servers", "a=h:1,a=h:2"}, 2, "duplicate"},
		{"inapplicable hash", []string{"--algo", "nginx", "--config", "x", "--hash", "md5"}, 2, "does not apply"},
		{"config overrides flags", []string{"--algo", "twemproxy", "--config", "x", "--hash", "md5"}, 2, "drop --hash"},
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
