package haproxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/testproc"
)

// backendCase is one backend: its hash-type line and its server lines, with
// %d standing for the port of backend responder k (server "k").
type backendCase struct {
	name     string
	hashType string   // empty: none, the defaults' applies
	servers  []string // "weight W [id I] [backup]" per server
	inherits bool     // placed after the "hashed" defaults section
}

var backendCases = []backendCase{
	{"consistent-default", "consistent", []string{"weight 1", "weight 3 id 7", "weight 2", "weight 1"}, false},
	{"consistent-djb2", "consistent djb2", []string{"weight 1 id 3", "weight 1 id 1", "weight 5 id 2"}, false},
	{"consistent-wt6-avalanche", "consistent wt6 avalanche", []string{"weight 10", "weight 1 id 2", "weight 1", "weight 1 backup", "weight 2"}, false},
	{"consistent-crc32", "consistent crc32", []string{"weight 2 id 100", "weight 256", "weight 0", "weight 7"}, false},
	{"consistent-sdbm", "consistent sdbm", []string{"weight 1", "weight 1", "weight 1", "weight 1", "weight 1", "weight 1", "weight 1", "weight 1"}, false},
	{"map-default", "map-based", []string{"weight 1", "weight 2", "weight 3"}, false},
	{"map-djb2-avalanche", "map-based djb2 avalanche", []string{"weight 4 id 9", "weight 6", "weight 2 id 1"}, false},
	{"map-crc32", "map-based crc32", []string{"weight 1", "weight 2", "weight 3", "weight 4", "weight 5", "weight 6"}, false},
	{"map-wt6", "map-based wt6", []string{"weight 3", "weight 0", "weight 5", "weight 2 backup"}, false},
	{"map-sdbm-avalanche", "map-based sdbm avalanche", []string{"weight 1", "weight 1", "weight 1", "weight 1", "weight 1"}, false},
	// These follow "defaults hashed from base": consistent wt6 avalanche,
	// default-server weight 3.
	{"inherited", "", []string{"", "weight 1", "id 9", ""}, true},
	{"inherited-overridden", "map-based djb2", []string{"", "weight 5", ""}, true},
}

// TestAgainstHAProxy runs one haproxy with responders that return their own
// port and one frontend per backend case balancing on hdr(X-Key). Thousands
// of keys must reach the server Index predicts, for every case.
func TestAgainstHAProxy(t *testing.T) {
	bin := realprog.Binary(t, "haproxy", "haproxy", "/usr/sbin/haproxy")
	const nResponders = 8
	var responders, fronts []int
	var placements []*Placement
	// A free port can be taken by another test's program before haproxy
	// binds it: then haproxy exits, and starts again on other ports.
	for attempt := 1; ; attempt++ {
		ports := realprog.FreePorts(t, nResponders+len(backendCases))
		responders, fronts = ports[:nResponders], ports[nResponders:]
		var cfg string
		cfg, placements = haproxyConfig(t, responders, fronts)
		if !startHAProxy(t, bin, cfg, ports) {
			break
		}
		if attempt == 3 {
			t.Fatal("haproxy found one of its ports taken three times in a row")
		}
	}

	keys := headerKeys(2000)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	for i, c := range backendCases {
		t.Run(c.name, func(t *testing.T) {
			// Server j of case i points at responder (i+j) mod nResponders.
			want := func(k string) string {
				return fmt.Sprint(responders[(i+placements[i].Index(HeaderValue([]byte(k))))%nResponders])
			}
			checkFrontend(t, client, fronts[i], placements[i].Hash(), keys, want)
		})
	}
}

// haproxyConfig returns the configuration and, per backend case, the
// placement built from the whole configuration haproxy reads, through
// ParseConfig: defaults sections and their inheritance included.
func haproxyConfig(t *testing.T, responders, fronts []int) (string, []*Placement) {
	var cfg strings.Builder
	cfg.WriteString("global\n  maxconn 2000\ndefaults base\n  mode http\n  timeout connect 5s\n  timeout client 30s\n  timeout server 30s\n")
	for _, p := range responders {
		fmt.Fprintf(&cfg, "frontend port%d\n  bind 127.0.0.1:%d\n  http-request return status 200 content-type text/plain lf-string \"%%[dst_port]\"\n", p, p)
	}
	for _, inherits := range []bool{false, true} {
		if inherits {
			cfg.WriteString("defaults hashed from base\n  hash-type consistent wt6 avalanche\n  default-server weight 3\n")
		}
		for i, c := range backendCases {
			if c.inherits != inherits {
				continue
			}
			fmt.Fprintf(&cfg, "frontend fe%d\n  bind 127.0.0.1:%d\n  default_backend be%d\n", i, fronts[i], i)
			fmt.Fprintf(&cfg, "backend be%d\n  balance hdr(X-Key)\n", i)
			if c.hashType != "" {
				fmt.Fprintf(&cfg, "  hash-type %s\n", c.hashType)
			}
			for j, s := range c.servers {
				fmt.Fprintf(&cfg, "  server s%d 127.0.0.1:%d %s\n", j, responders[(i+j)%len(responders)], s)
			}
		}
	}
	placements := make([]*Placement, len(backendCases))
	for _, s := range ParseConfig(cfg.String()) {
		var i int
		if _, err := fmt.Sscanf(s.Name, "be%d", &i); err != nil {
			t.Fatalf("section %q: %v", s.Name, err)
		}
		b, err := s.Backend()
		if err != nil {
			t.Fatalf("%s: %v", backendCases[i].name, err)
		}
		if placements[i], err = New(b.Servers, b.Hash); err != nil {
			t.Fatalf("%s: %v", backendCases[i].name, err)
		}
	}
	return cfg.String(), placements
}

// startHAProxy runs haproxy in the foreground until the test ends and waits
// until every port listens. It reports whether haproxy exited because an
// address was in use; any other exit fails the test.
func startHAProxy(t *testing.T, bin, cfg string, ports []int) (inUse bool) {
	cfgPath := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "-db", "-f", cfgPath)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := testproc.Start(cmd); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cancel()
		<-exited
		if t.Failed() {
			t.Logf("haproxy output: %s", out.String())
		}
	})
	deadline := time.Now().Add(realprog.Patience)
	for _, p := range ports {
		for {
			c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", p), time.Second)
			if err == nil {
				c.Close()
				break
			}
			select {
			case <-exited:
				if strings.Contains(out.String(), "Address already in use") {
					return true
				}
				t.Fatal("haproxy exited during startup")
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("haproxy: port %d not listening after %v", p, realprog.Patience)
			}
			time.Sleep(20 * time.Millisecond) // polling for readiness, not ordering
		}
	}
	return false
}

// checkFrontend sends every key as X-Key through the frontend and compares
// the port that answers with want(key).
func checkFrontend(t *testing.T, client *http.Client, port int, h HashType, keys []string, want func(string) string) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	mismatches := 0
	work := make(chan string)
	for range 4 {
		wg.Go(func() {
			for k := range work {
				if got, w := fetch(t, client, port, k), want(k); got != w {
					mu.Lock()
					if mismatches < 5 {
						t.Errorf("key %q: haproxy chose port %s, Index predicts %s", k, got, w)
					}
					mismatches++
					mu.Unlock()
				}
			}
		})
	}
	for _, k := range keys {
		work <- k
	}
	close(work)
	wg.Wait()
	t.Logf("%s: %d keys, %d mismatches", h, len(keys), mismatches)
	if mismatches > 0 {
		t.Fatalf("%d of %d keys mismatched", mismatches, len(keys))
	}
}

func fetch(t *testing.T, c *http.Client, port int, key string) string {
	req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/", port), nil)
	req.Header["X-Key"] = []string{key}
	resp, err := c.Do(req)
	if err != nil {
		t.Errorf("request: %v", err)
		return ""
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("response %d %q: %v", resp.StatusCode, b, err)
	}
	return string(b)
}

// headerKeys returns header values: visible ASCII with inner spaces and
// bytes >= 0x80, long values, and lists (commas, quoted commas, blanks) of
// which HAProxy hashes the first element, [HeaderValue]. The first element
// is never empty: HAProxy balances an empty one round robin.
func headerKeys(n int) []string {
	r := rand.New(rand.NewPCG(42, 5))
	keys := make([]string, 0, n)
	for len(keys) < n {
		var k []byte
		switch len(keys) % 5 {
		case 0, 1:
			k = make([]byte, 1+r.IntN(32))
			for j := range k {
				for {
					c := byte(r.UintN(256))
					if c > ' ' && c != ',' && c != 0x7f || j > 0 && j < len(k)-1 && c == ' ' {
						k[j] = c
						break
					}
				}
			}
		case 2:
			k = fmt.Appendf(nil, "user:%d:{tag%d}", r.IntN(1e6), r.IntN(10))
		case 3:
			k = bytes.Repeat([]byte{byte('a' + r.IntN(26)), 0xe9}, 100+r.IntN(300))
		case 4:
			parts := []string{"a", "b c", `"x,y"`, `"q\",r"`, "\xe9t\xe9", "  ", "z"}
			k = fmt.Appendf(nil, "%s%d%s,%s, %s", parts[r.IntN(len(parts))], r.IntN(1000), parts[r.IntN(len(parts))],
				parts[r.IntN(len(parts))], parts[r.IntN(len(parts))])
		}
		keys = append(keys, string(k))
	}
	return keys
}
