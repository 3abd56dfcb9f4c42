package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
)

// threePools returns a configuration of three pools, alpha, beta and
// gamma, on free ports, each with servers servers (never dialled: no
// client sends a request).
func threePools(t *testing.T, servers int) string {
	ports := realprog.FreePorts(t, 3)
	var b strings.Builder
	b.WriteString("kolco:\n  metrics_listen: 127.0.0.1:0\n")
	for i, name := range []string{"alpha", "beta", "gamma"} {
		fmt.Fprintf(&b, "%s:\n  listen: 127.0.0.1:%d\n  servers:\n", name, ports[i])
		for j := range servers {
			fmt.Fprintf(&b, "   - 127.0.0.1:%d:1\n", 40000+10*i+j)
		}
	}
	return b.String()
}

// TestProxyWatchNeverAppliesAPartialFile truncates the watched file,
// writes it up to the first pool's first server line, pauses 1.5 s (as a
// slow writer does) and completes it: nothing of the partial file may be
// applied, only the complete one.
func TestProxyWatchNeverAppliesAPartialFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nutcracker.yml")
	before := threePools(t, 3)
	if err := os.WriteFile(path, []byte(before), 0o600); err != nil {
		t.Fatal(err)
	}
	s := serveRun(t, proxyRun{path: path, watch: 20 * time.Millisecond, settle: settleFor, watchConfig: true, verbose: -1})
	after := strings.Replace(before, "   - 127.0.0.1:40022:1\n", "   - 127.0.0.1:40022:1\n   - 127.0.0.1:40023:1\n", 1)
	cut := strings.Index(after, "   - ") + len("   - 127.0.0.1:40000:1\n")

	// Watch what the proxy runs, from before the write until it applied
	// the complete file.
	var mu sync.Mutex
	fewestPools, fewestServers := 3, 3
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			cfg := s.Config()
			mu.Lock()
			fewestPools = min(fewestPools, len(cfg.Pools))
			for _, p := range cfg.Pools {
				fewestServers = min(fewestServers, len(p.Servers))
			}
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond): // sampling, not synchronisation
			}
		}
	}()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(after[:cut]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // the slow writer's pause, the scenario under test
	if _, err := f.WriteString(after[cut:]); err != nil {
		t.Fatal(err)
	}
	f.Close()
	eventually(t, "the complete file applied", func() bool {
		g := s.Config().Pools["gamma"]
		return g != nil && len(g.Servers) == 4
	})
	close(stop)
	<-watched
	if fewestPools != 3 || fewestServers != 3 {
		t.Errorf("while the file was written the proxy ran %d pools, one of %d servers", fewestPools, fewestServers)
	}
	if n := scrape(t, s, "kolco_proxy_reloads_total"); n != 1 {
		t.Errorf("%v reloads, want 1: the complete file only", n)
	}
	if n := scrape(t, s, "kolco_proxy_reload_failures_total"); n != 0 {
		t.Errorf("%v reloads refused: a partial file was tried", n)
	}
}

// TestProxySIGHUPReopensLog: after logrotate moves the log file away and
// sends SIGHUP, the proxy logs to a new file at the same path.
func TestProxySIGHUPReopensLog(t *testing.T) {
	dir := t.TempDir()
	path, logPath := filepath.Join(dir, "nutcracker.yml"), filepath.Join(dir, "proxy.log")
	if err := os.WriteFile(path, []byte(threePools(t, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	serveRun(t, proxyRun{path: path, logPath: logPath, watch: -1, verbose: -1})
	read := func(p string) string {
		b, _ := os.ReadFile(p)
		return string(b)
	}
	eventually(t, "the start logged", func() bool { return strings.Contains(read(logPath), "listening") })
	if err := os.Rename(logPath, logPath+".1"); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the reload logged in a new file", func() bool { return strings.Contains(read(logPath), "configuration reloaded") })
	if old := read(logPath + ".1"); strings.Contains(old, "SIGHUP") || !strings.Contains(old, "listening") {
		t.Errorf("the rotated file:\n%s", old)
	}
}
