package proxy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/internal/testproc"
)

// TestNutcrackerConfigsAccepted: files nutcracker takes (nutcracker -t
// says so) are taken: distribution random, redis_db in a memcached pool
// (ignored, and --check says so) and backlog.
func TestNutcrackerConfigsAccepted(t *testing.T) {
	bin := needBinary(t, "nutcracker")
	for _, tc := range []struct{ name, settings, explains string }{
		{"random", "  distribution: random\n", "placement: random"},
		{"random with auto_eject_hosts", "  distribution: random\n  auto_eject_hosts: true\n", "placement: random"},
		{"redis_db in a memcached pool", "  redis_db: 3\n", "ignored, as nutcracker ignores it: redis_db 3"},
		{"backlog", "  backlog: 1024\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			yaml := "p:\n  listen: 127.0.0.1:22121\n" + tc.settings + "  servers:\n   - 127.0.0.1:11211:1\n   - 127.0.0.1:11212:1\n"
			conf := filepath.Join(t.TempDir(), "nutcracker.yml")
			if err := os.WriteFile(conf, []byte(yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := testproc.CombinedOutput(exec.Command(bin, "-t", "-c", conf)); err != nil {
				t.Fatalf("nutcracker -t refuses it: %v\n%s", err, out)
			}
			cfg, err := ParseConfig([]byte(yaml))
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			var b strings.Builder
			if err := cfg.Explain(&b); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), tc.explains) {
				t.Errorf("--check does not say %q:\n%s", tc.explains, b.String())
			}
		})
	}
}

// TestRandomDistributionAsNutcracker sends the same sets to nutcracker and
// the proxy, each with distribution random over the same three memcached
// servers: each request goes to one server picked at random, so distinct
// keys spread over every server and one key written many times lands on
// more than one, through either program.
func TestRandomDistributionAsNutcracker(t *testing.T) {
	t.Parallel()
	needBinary(t, "nutcracker")
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0)}
	settings := fmt.Sprintf("  distribution: random\n  timeout: 10000\n  servers:\n   - %s:1\n   - %s:5\n   - %s:1\n", ms[0].addr, ms[1].addr, ms[2].addr)
	ncListen := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startNutcracker(t, "p:\n  listen: "+ncListen+"\n"+settings, ncListen)
	s := startProxy(t, "p:\n  listen: 127.0.0.1:0\n"+settings)
	for _, proxy := range []struct{ name, addr string }{{"nutcracker", ncListen}, {"kolco", s.Addr("p").String()}} {
		t.Run(proxy.name, func(t *testing.T) {
			flushAll(t, ms)
			c := dial(t, proxy.addr)
			// 300 keys: a server gets fewer than 50 of them, at a third
			// each whatever the weights, with a chance under 1e-12.
			keys := make([]string, 300)
			for i := range keys {
				keys[i] = "r" + strconv.Itoa(i)
				if got := c.do("set " + keys[i] + " 0 0 1\r\nx\r\n"); got != "STORED\r\n" {
					t.Fatalf("set: %q", got)
				}
			}
			for i := range 60 {
				if got := c.do(fmt.Sprintf("set same 0 0 %d\r\n%d\r\n", len(strconv.Itoa(i)), i)); got != "STORED\r\n" {
					t.Fatalf("set same: %q", got)
				}
			}
			at := holders(t, ms, keys)
			per := map[int]int{}
			for _, i := range at {
				per[i]++
			}
			holding := 0
			for _, m := range ms {
				if strings.HasPrefix(dial(t, m.addr).do("get same\r\n"), "VALUE") {
					holding++
				}
			}
			if per[-1] != 0 || per[-2] != 0 || per[0] < 50 || per[1] < 50 || per[2] < 50 || holding < 2 {
				t.Errorf("keys per server %v (-1 none, -2 several); the key written 60 times on %d servers", per, holding)
			}
			t.Logf("keys per server %v; one key written 60 times is on %d servers", per, holding)
		})
	}
}

// TestBacklogAsNutcracker: the pool's backlog is its listening socket's,
// as nutcracker's is (ss reports it as the socket's Send-Q).
func TestBacklogAsNutcracker(t *testing.T) {
	needBinary(t, "nutcracker")
	ss := needBinary(t, "ss")
	m := startMemcached(t, 0)
	settings := fmt.Sprintf("  backlog: 37\n  servers:\n   - %s:1\n", m.addr)
	ncListen := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startNutcracker(t, "p:\n  listen: "+ncListen+"\n"+settings, ncListen)
	s := startProxy(t, "p:\n  listen: 127.0.0.1:0\n"+settings)
	backlog := func(addr string) string {
		out, err := testproc.Output(exec.Command(ss, "-ltnH", "src", addr))
		if err != nil {
			t.Fatalf("ss: %v", err)
		}
		f := strings.Fields(string(out))
		if len(f) < 3 {
			t.Fatalf("ss says %q for %s", out, addr)
		}
		return f[2] // State Recv-Q Send-Q ...
	}
	if nc, k := backlog(ncListen), backlog(s.Addr("p").String()); nc != "37" || k != nc {
		t.Errorf("backlog: nutcracker %s, kolco %s, want 37", nc, k)
	}
}
