package proxy

import (
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kolco-dev/kolco/internal/realprog"
)

// adminGet gets path from s's admin endpoint with token (none when empty)
// and decodes the JSON reply into v; it returns the status code.
func adminGet(t *testing.T, s *Server, path, token string, v any) int {
	t.Helper()
	req, err := http.NewRequest("GET", "http://"+s.AdminAddr().String()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	// Bounded, so that an admin page that never answers fails the test
	// rather than hangs the package.
	resp, err := (&http.Client{Timeout: realprog.Patience}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if v != nil && resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode
}

// TestAdminLocate: the admin endpoint says which server holds a key under
// the placement the proxy uses now - the server a set through the proxy
// reaches - and, after an ejection under rehash, the server it moved to.
func TestAdminLocate(t *testing.T) {
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0)}
	dead := refusedAddr(t)
	s := startProxy(t, "kolco:\n  admin_listen: \":0\"\np:\n  listen: 127.0.0.1:0\n  timeout: 10000\n  auto_eject_hosts: true\n  server_failure_limit: 1\n"+
		"  health_check: {interval: 600000}\n  servers:\n   - "+ms[0].addr+":1 a\n   - "+ms[1].addr+":1 b\n   - "+dead+":1 gone\n")
	if host := strings.Split(s.AdminAddr().String(), ":")[0]; host != "127.0.0.1" {
		t.Errorf("admin endpoint on %s, want 127.0.0.1 when no host is given", s.AdminAddr())
	}
	c := dial(t, s.Addr("p").String())
	keys := diffKeys(30)
	var onDead string
	for _, k := range keys {
		var locs []Location
		if code := adminGet(t, s, "/v1/pools/p/locate?key="+urlKey(k), "", &locs); code != http.StatusOK || len(locs) != 1 {
			t.Fatalf("locate %q: %d %v", k, code, locs)
		}
		loc := locs[0]
		if (utf8.ValidString(k) && loc.Key != k) || len(loc.Servers) != 1 || loc.Read == nil || *loc.Read != loc.Servers[0] {
			t.Fatalf("locate %q: %+v", k, loc)
		}
		if loc.Servers[0].Addr == dead {
			onDead = k
			continue
		}
		if got := c.do("set " + k + " 0 0 1\r\nx\r\n"); got != "STORED\r\n" {
			t.Fatalf("set %q: %q", k, got)
		}
		if !holds(t, &memcached{addr: loc.Servers[0].Addr}, k) {
			t.Errorf("%q: the admin endpoint says %s, which does not hold it", k, loc.Servers[0].Name)
		}
	}
	if onDead == "" {
		t.Fatal("no key of the dead server among the keys")
	}
	c.do("get " + onDead + "\r\n") // ejects it
	var locs []Location
	adminGet(t, s, "/v1/pools/p/locate?key="+urlKey(onDead), "", &locs)
	if got := locs[0].Servers[0]; got.Addr == dead || !got.Up {
		t.Errorf("after the ejection %q is placed on %+v", onDead, got)
	}
	var pools []PoolStatus
	if code := adminGet(t, s, "/v1/pools", "", &pools); code != http.StatusOK || len(pools) != 1 || len(pools[0].Servers) != 3 {
		t.Fatalf("pools: %d %+v", code, pools)
	}
	share := 0.0
	for _, sv := range pools[0].Servers {
		if sv.Up != (sv.Addr != dead) {
			t.Errorf("server %s up %v", sv.Name, sv.Up)
		}
		share += sv.Share
	}
	if math.Abs(share-1) > 1e-9 || pools[0].Servers[2].Share != 0 {
		t.Errorf("shares %+v: the ejected server holds none, the others all", pools[0].Servers)
	}
	if code := adminGet(t, s, "/v1/pools/nosuch", "", nil); code != http.StatusNotFound {
		t.Errorf("unknown pool: %d", code)
	}
}

func urlKey(k string) string { return url.QueryEscape(k) }

// TestAdminToken: with admin_token_file, the admin endpoint answers only a
// request with that bearer token.
func TestAdminToken(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startProxy(t, "kolco:\n  admin_listen: 127.0.0.1:0\n  admin_token_file: "+path+"\n"+poolYAML("", startMemcached(t, 0)))
	for _, tc := range []struct {
		token string
		want  int
	}{{"", http.StatusUnauthorized}, {"wrong", http.StatusUnauthorized}, {"s3cret", http.StatusOK}} {
		if got := adminGet(t, s, "/v1/pools", tc.token, nil); got != tc.want {
			t.Errorf("token %q: %d, want %d", tc.token, got, tc.want)
		}
	}
}

// TestAdminLocateReplicas: with replicas the admin endpoint lists every
// copy in preference order, and the read goes to the copy in the proxy's
// zone.
func TestAdminLocateReplicas(t *testing.T) {
	s := startProxy(t, "kolco:\n  admin_listen: 127.0.0.1:0\np:\n  listen: 127.0.0.1:0\n  distribution: ring\n  replicas: 2\n"+
		"  zone: z1\n  zones: {a: z1, b: z1, c: z2, d: z2}\n  servers: [\"127.0.0.1:1:1 a\", \"127.0.0.1:2:1 b\", \"127.0.0.1:3:1 c\", \"127.0.0.1:4:1 d\"]\n")
	var locs []Location
	if code := adminGet(t, s, "/v1/pools/p/locate?key=k1&key=k2&key=k3", "", &locs); code != http.StatusOK || len(locs) != 3 {
		t.Fatalf("locate: %d %+v", code, locs)
	}
	zone := map[string]string{"a": "z1", "b": "z1", "c": "z2", "d": "z2"}
	for _, loc := range locs {
		if len(loc.Servers) != 2 || zone[loc.Servers[0].Name] == zone[loc.Servers[1].Name] {
			t.Errorf("%s: copies %+v, want two in distinct zones", loc.Key, loc.Servers)
		}
		if loc.Read == nil || zone[loc.Read.Name] != "z1" {
			t.Errorf("%s: read from %+v, want the copy in z1", loc.Key, loc.Read)
		}
	}
}

// FuzzLocate: any key, as the admin endpoint takes it from a request, is
// placed without a panic, on a server of the pool.
func FuzzLocate(f *testing.F) {
	var pools []*pool
	f.Add("user:1")
	f.Add("")
	f.Add("{tag}rest")
	f.Add("\xff\xfe{")
	for _, dist := range []string{"ketama", "modula", "ring"} {
		y := "p:\n  listen: 127.0.0.1:1\n  distribution: " + dist + "\n  hash_tag: \"{}\"\n  servers: [\"127.0.0.1:2:1 a\", \"127.0.0.1:3:2 b\"]\n"
		cfg, err := ParseConfig([]byte(y))
		if err != nil {
			f.Fatal(err)
		}
		p, err := testPool(cfg.Pools["p"])
		if err != nil {
			f.Fatal(err)
		}
		pools = append(pools, p)
	}
	f.Fuzz(func(t *testing.T, key string) {
		for _, p := range pools {
			loc := p.locate(key)
			if len(loc.Servers) != 1 || loc.Read == nil || loc.Read.Name != loc.Servers[0].Name {
				t.Fatalf("%s: %q placed as %+v", p.cfg.Distribution, key, loc)
			}
		}
	})
}
