package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/fleet"
	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/testproc"
	"github.com/kolco-dev/kolco/membership/etcdtest"
	"github.com/kolco-dev/kolco/proxy/memcache"
)

// fleetProxy is a "kolco proxy" process of a fleet test.
type fleetProxy struct {
	cmd           *exec.Cmd
	listen, admin string
	exited        chan struct{}
}

// startFleetProxy runs "kolco proxy" with one pool, p, on the etcd
// prefix, placed by distribution; Cleanup kills it.
func startFleetProxy(t *testing.T, endpoint, prefix, distribution, static string) *fleetProxy {
	t.Helper()
	return startSourcedProxy(t, distribution, static,
		fmt.Sprintf("etcd: {endpoints: [%q], prefix: %s, check_interval: 200}", endpoint, prefix))
}

// startSourcedProxy runs "kolco proxy" with one pool, p, whose membership
// key is source, placed by distribution; Cleanup kills it.
func startSourcedProxy(t *testing.T, distribution, static, source string) *fleetProxy {
	t.Helper()
	ports := realprog.RestartablePorts(t, 2) // below the ephemeral range: no outgoing connection takes them meanwhile
	fp := &fleetProxy{listen: fmt.Sprintf("127.0.0.1:%d", ports[0]), admin: fmt.Sprintf("127.0.0.1:%d", ports[1]),
		exited: make(chan struct{})}
	conf := filepath.Join(t.TempDir(), "nutcracker.yml")
	y := fmt.Sprintf("kolco:\n  admin_listen: %s\np:\n  listen: %s\n  distribution: %s\n  timeout: 10000\n"+
		"  servers:\n   - %s:1 static\n  membership:\n    %s\n",
		fp.admin, fp.listen, distribution, static, source)
	if err := os.WriteFile(conf, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	fp.cmd = program(t, "kolco", "proxy", "--config", conf)
	stderr := &lockedBuffer{}
	fp.cmd.Stderr = stderr
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("proxy %s's stderr:\n%s", fp.admin, stderr.String())
		}
	})
	if err := testproc.Start(fp.cmd); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = fp.cmd.Wait()
		close(fp.exited)
	}()
	t.Cleanup(func() {
		_ = fp.cmd.Process.Signal(syscall.SIGCONT) // a paused one too
		_ = fp.cmd.Process.Kill()
		<-fp.exited
	})
	realprog.WaitListening(t, "kolco proxy", ports, fp.exited)
	return fp
}

// lockedBuffer is a buffer a process writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// proxyPool is what the fleet tests read of a proxy's pool: what status
// reads, and more.
type proxyPool struct {
	fleet.PoolStatus
	Nodes   []string `json:"nodes"`
	Resyncs int64    `json:"resyncs"`
}

// membership returns the proxy's pool p as its admin endpoint reports it,
// or ok false when it does not answer.
func (fp *fleetProxy) membership(t *testing.T) (pm proxyPool, ok bool) {
	t.Helper()
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + fp.admin + "/v1/membership")
	if err != nil {
		return pm, false
	}
	defer resp.Body.Close()
	var all []proxyPool
	if err := json.NewDecoder(resp.Body).Decode(&all); err != nil || len(all) != 1 {
		t.Fatalf("proxy %s: /v1/membership: %v %+v", fp.admin, err, all)
	}
	return all[0], true
}

// agreeAt waits until every proxy serves revision rev or later with one
// fingerprint, and returns it with the time it took from start.
func agreeAt(t *testing.T, rev int64, start time.Time, proxies ...*fleetProxy) (string, time.Duration) {
	t.Helper()
	var fps []string
	eventually(t, fmt.Sprintf("the proxies to agree at revision %d", rev), func() bool {
		fps = fps[:0]
		for _, fp := range proxies {
			pm, ok := fp.membership(t)
			if !ok || pm.Revision < rev || pm.Stale {
				return false
			}
			fps = append(fps, pm.Fingerprint)
		}
		for _, f := range fps {
			if f != fps[0] {
				return false
			}
		}
		return true
	})
	return fps[0], time.Since(start)
}

var revisionRE = regexp.MustCompile(`\(revision (\d+)\)`)

// membersDo runs a "kolco members" change and returns its revision.
func membersDo(t *testing.T, srv *etcdtest.Server, prefix string, args ...string) int64 {
	t.Helper()
	code, out, errs := runCLI(t, "", append([]string{"members", "--endpoints", srv.Endpoint, "--prefix", prefix}, args...)...)
	m := revisionRE.FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("members %v: exit %d, %q %q", args, code, out, errs)
	}
	rev, _ := strconv.ParseInt(m[1], 10, 64)
	return rev
}

// setKeys sets every key through the proxy at addr, a pipelined batch at
// a time.
func setKeys(t *testing.T, addr string, keys []string) {
	t.Helper()
	c := dialMC(t, addr)
	for i := 0; i < len(keys); i += 100 {
		batch := keys[i:min(i+100, len(keys))]
		var b strings.Builder
		for _, k := range batch {
			b.WriteString("set " + k + " 0 0 1\r\nx\r\n")
		}
		c.send(b.String())
		for _, k := range batch {
			if got := c.reply(memcache.CmdSet); got != "STORED\r\n" {
				t.Fatalf("set %s through %s: %q", k, addr, got)
			}
		}
	}
}

// countHits gets every key through the proxy at addr, a hundred a
// request, and returns how many it found.
func countHits(t *testing.T, addr string, keys []string) int {
	t.Helper()
	c := dialMC(t, addr)
	hits := 0
	for i := 0; i < len(keys); i += 100 {
		batch := keys[i:min(i+100, len(keys))]
		c.send("get " + strings.Join(batch, " ") + "\r\n")
		hits += strings.Count(c.reply(memcache.CmdGet), "VALUE ")
	}
	return hits
}

// itemsOn returns how many items the memcached at addr holds.
func itemsOn(t *testing.T, addr string) int {
	t.Helper()
	c := dialMC(t, addr)
	c.send("stats\r\n")
	for _, line := range strings.Split(c.reply(memcache.CmdStats), "\r\n") {
		if v, ok := strings.CutPrefix(line, "STAT curr_items "); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("stats of %s: %q", addr, line)
			}
			return n
		}
	}
	t.Fatalf("stats of %s: no curr_items", addr)
	return 0
}
