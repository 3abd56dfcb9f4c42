package nginx

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/testproc"
)

type upstreamCase struct {
	name    string
	weights []int // one server per weight, over the backend ports in order
	offset  int   // first backend port used
	down    []int // servers marked down
}

// front is one proxied upstream of the test configuration and its
// placement.
type front struct {
	name    string
	port    int
	servers []Server
	index   func([]byte) int
	exact   func([]byte) bool // false: nginx falls back to round robin
}

// TestAgainstNginx starts nginx with backends that answer their own port and,
// for several server lists with unequal weights, one front per mode
// (`hash $arg_k consistent;` and `hash $arg_k;`). Thousands of keys with
// arbitrary bytes, sent URL-escaped, must reach the backend Index predicts.
func TestAgainstNginx(t *testing.T) {
	bin := realprog.Binary(t, "nginx-light", "nginx", "/usr/sbin/nginx")
	cases := []upstreamCase{
		{"w1-2-3", []int{1, 2, 3}, 0, nil},
		{"w5-1-1-1-1", []int{5, 1, 1, 1, 1}, 1, nil},
		{"w1-7", []int{1, 7}, 4, nil},
		{"w8x", []int{2, 1, 3, 1, 4, 1, 1, 2}, 0, nil},
		{"down", []int{2, 1, 3, 1, 2}, 2, []int{0, 3}},
	}
	const nBackends = 8
	ports := realprog.FreePorts(t, nBackends+2*len(cases))
	dir := t.TempDir()
	conf, fronts := nginxConfig(t, dir, ports[:nBackends], ports[nBackends:], cases)
	startNginx(t, bin, dir, conf, ports)

	keys := integrationKeys(2000)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	for _, f := range fronts {
		t.Run(f.name, func(t *testing.T) { checkFront(t, client, f, keys) })
	}
}

// nginxConfig writes the configuration: one responder per backend port and,
// per case, a consistent and a plain hash upstream, each behind a front. The
// placements are built from the whole file nginx reads, through ParseConfig.
func nginxConfig(t *testing.T, dir string, backends, ports []int, cases []upstreamCase) (string, []front) {
	var conf strings.Builder
	if os.Geteuid() == 0 {
		conf.WriteString("user root;\n")
	}
	conf.WriteString("worker_processes 1;\nevents { worker_connections 256; }\nhttp {\n access_log off;\n")
	for _, d := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		fmt.Fprintf(&conf, " %s_temp_path %s;\n", d, filepath.Join(dir, d))
	}
	for _, p := range backends {
		fmt.Fprintf(&conf, " server { listen 127.0.0.1:%d; return 200 \"$server_port\"; }\n", p)
	}
	var fronts []front
	for i, c := range cases {
		for m, mode := range []string{"consistent", ""} {
			fmt.Fprintf(&conf, "upstream u%d_%d {\n  hash $arg_k %s;\n", i, m, mode)
			for j, w := range c.weights {
				down := ""
				if slices.Contains(c.down, j) {
					down = " down"
				}
				fmt.Fprintf(&conf, "  server 127.0.0.1:%d weight=%d max_fails=0%s;\n", backends[(c.offset+j)%len(backends)], w, down)
			}
			conf.WriteString("}\n")
			fmt.Fprintf(&conf, " server { listen 127.0.0.1:%d; location / { proxy_pass http://u%d_%d; } }\n", ports[2*i+m], i, m)
			fronts = append(fronts, front{name: c.name + "/" + [2]string{"consistent", "hash"}[m], port: ports[2*i+m]})
		}
	}
	conf.WriteString("}\n")
	blocks, err := ParseConfig(conf.String())
	if err != nil || len(blocks) != len(fronts) {
		t.Fatalf("ParseConfig found %d upstreams (%v), want %d", len(blocks), err, len(fronts))
	}
	for i := range fronts {
		placeFront(t, &fronts[i], blocks[i])
	}
	return conf.String(), fronts
}

// placeFront builds the placement of front f from its upstream block.
func placeFront(t *testing.T, f *front, b Block) {
	u, err := b.Upstream()
	if err != nil {
		t.Fatal(err)
	}
	f.servers = u.Servers
	if u.Consistent {
		p, err := NewConsistent(u.Servers)
		if err != nil {
			t.Fatal(err)
		}
		f.index, f.exact = p.Index, func([]byte) bool { return true }
		return
	}
	p, err := NewModulo(u.Servers)
	if err != nil {
		t.Fatal(err)
	}
	f.index = p.Index
	f.exact = func(k []byte) bool { _, ok := p.index(k); return ok }
}

// startNginx runs nginx in the foreground on conf until the test ends and
// waits until every port listens.
func startNginx(t *testing.T, bin, dir, conf string, ports []int) {
	confPath, errLog := filepath.Join(dir, "nginx.conf"), filepath.Join(dir, "error.log")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "-p", dir, "-c", confPath, "-e", errLog,
		"-g", fmt.Sprintf("daemon off; master_process off; pid %s; error_log %s;", filepath.Join(dir, "nginx.pid"), errLog))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := testproc.Start(cmd); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cancel()
		<-exited
		if t.Failed() {
			log, _ := os.ReadFile(errLog)
			t.Logf("nginx stderr: %s\nerror.log: %s", stderr.String(), log)
		}
	})
	realprog.WaitListening(t, "nginx", ports, exited)
}

// checkFront sends every key, URL-escaped, through the front and compares
// the backend that answers with Index of the escaped text, which is what
// $arg_k holds. It also counts how often hashing the unescaped bytes would
// have agreed, to show which text nginx hashes.
func checkFront(t *testing.T, client *http.Client, f front, keys [][]byte) {
	mismatches, unescapedAgree, roundRobin := 0, 0, 0
	var mu sync.Mutex
	var wg sync.WaitGroup
	work := make(chan []byte)
	for range 4 {
		wg.Go(func() {
			for raw := range work {
				esc := url.QueryEscape(string(raw))
				if !f.exact([]byte(esc)) {
					mu.Lock()
					roundRobin++
					mu.Unlock()
					continue
				}
				got := fetchPort(t, client, f.port, esc)
				want := f.servers[f.index([]byte(esc))].Addr
				mu.Lock()
				if got != want[strings.LastIndexByte(want, ':')+1:] {
					if mismatches < 5 {
						t.Errorf("key %q (sent %q): nginx chose port %s, Index predicts %s", raw, esc, got, want)
					}
					mismatches++
				}
				if f.servers[f.index(raw)].Addr == want {
					unescapedAgree++
				}
				mu.Unlock()
			}
		})
	}
	for _, k := range keys {
		work <- k
	}
	close(work)
	wg.Wait()
	t.Logf("%d keys (%d left to round robin), %d mismatches (hashing the unescaped bytes instead would agree on only %d)",
		len(keys)-roundRobin, roundRobin, mismatches, unescapedAgree)
	if mismatches > 0 {
		t.Fatalf("%d of %d keys mismatched", mismatches, len(keys))
	}
}

func fetchPort(t *testing.T, c *http.Client, port int, escapedKey string) string {
	resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/?k=%s", port, escapedKey))
	if err != nil {
		t.Errorf("request: %v", err)
		return ""
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("response %d %q: %v", resp.StatusCode, b, err)
	}
	if _, err := strconv.Atoi(string(b)); err != nil {
		t.Errorf("body %q is not a port", b)
	}
	return string(b)
}

// integrationKeys returns non-empty keys: random bytes (all 256 values, so
// many are %XX-escaped), printable words, and long keys.
func integrationKeys(n int) [][]byte {
	r := rand.New(rand.NewPCG(42, 4))
	keys := make([][]byte, 0, n)
	for len(keys) < n {
		var k []byte
		switch len(keys) % 4 {
		case 0, 1:
			k = make([]byte, 1+r.IntN(32))
			for j := range k {
				k[j] = byte(r.UintN(256))
			}
		case 2:
			k = []byte(fmt.Sprintf("user:%d:{tag%d}", r.IntN(1e6), r.IntN(10)))
		case 3:
			k = bytes.Repeat([]byte{byte('a' + r.IntN(26)), 0xe9}, 100+r.IntN(200))
		}
		keys = append(keys, k)
	}
	return keys
}
