package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
)

// bigValue is the size of each value of TestProxyMemoryBounded, and
// bigWriters how many are written at once.
const bigValue, bigWriters = 100 << 20, 8

// memoryOverhead is what the proxy holds beyond kolco.buffer_limit at the
// most, as docs/operations.md documents it: the runtime, the placement and
// the connections' buffers, and the garbage the collector has not yet
// returned under the memory limit set from the budget.
const memoryOverhead = 256 << 20

// TestProxyMemoryBounded: eight clients each write a 100 MB value at once
// to a memcached pool with the default settings but a 30 s timeout (at
// the default 1 s a busy machine, load 40 on 2 cores, timed writes out
// in memcached: a longer wait holds the values longer, no less), through
// a kolco proxy process under the default kolco.buffer_limit (2 GiB);
// every write succeeds, the process's peak RSS stays within the budget
// plus the documented overhead, and once the writes are done its RSS
// returns to the system, within 30 s of idling. (A Redis pool's are
// measured beside nutcracker: TestBigValuesBesideNutcracker.)
func TestProxyMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 800 MB through the proxy")
	}
	mc := startMemcached(t, "-m", "1200", "-I", "128m")
	ports := realprog.FreePorts(t, 1)
	dir := t.TempDir()
	conf := filepath.Join(dir, "nutcracker.yml")
	y := fmt.Sprintf("mc:\n  listen: 127.0.0.1:%d\n  timeout: 30000\n  servers: [\"%s:1\"]\n", ports[0], mc)
	if err := os.WriteFile(conf, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	proxy := program(t, "kolco", "proxy", "-c", conf, "-o", filepath.Join(dir, "kolco.log"))
	if err := proxy.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = proxy.Wait(); close(done) }()
	t.Cleanup(func() { _ = proxy.Process.Kill(); <-done })
	realprog.WaitListening(t, "kolco proxy", ports, done)
	pid := proxy.Process.Pid
	t.Logf("RSS at start: %d MiB", procMemory(t, pid, "VmRSS")>>20)

	for i, proto := range []string{"memcached"} {
		resetPeak(t, pid)
		start := time.Now()
		writeBig(t, proto, fmt.Sprintf("127.0.0.1:%d", ports[i]))
		peak := procMemory(t, pid, "VmHWM")
		t.Logf("%s: %d values of %d MB written at once in %v; peak RSS %d MiB (budget 2048 MiB + overhead %d MiB)",
			proto, bigWriters, bigValue>>20, time.Since(start).Round(time.Millisecond), peak>>20, memoryOverhead>>20)
		if peak > 2<<30+memoryOverhead {
			t.Errorf("%s: peak RSS %d MiB, over the budget and its overhead", proto, peak>>20)
		}
		idle := time.Now()
		rss := procMemory(t, pid, "VmRSS")
		for rss > memoryOverhead && time.Since(idle) < 30*time.Second {
			time.Sleep(500 * time.Millisecond)
			rss = procMemory(t, pid, "VmRSS")
		}
		t.Logf("%s: RSS %d MiB after %v idle", proto, rss>>20, time.Since(idle).Round(100*time.Millisecond))
		if rss > memoryOverhead {
			t.Errorf("%s: RSS %d MiB after 30 s idle: the values' memory was not returned", proto, rss>>20)
		}
	}
}

// writeBig writes bigWriters values of bigValue bytes at once to the
// pool at addr, each on a connection of its own, streamed from a small
// buffer, and fails the test unless each is stored.
func writeBig(t *testing.T, proto, addr string) {
	chunk := bytes.Repeat([]byte("v"), 1<<20)
	var wg sync.WaitGroup
	errs := make([]error, bigWriters)
	for w := range bigWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = writeOneBig(proto, addr, fmt.Sprintf("big:%d", w), chunk)
		}()
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Errorf("%s writer %d: %v", proto, w, err)
		}
	}
}

func writeOneBig(proto, addr, key string, chunk []byte) error {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(90 * time.Second)); err != nil {
		return err
	}
	w := bufio.NewWriterSize(conn, 1<<20)
	want := "STORED\r\n"
	if proto == "redis" {
		fmt.Fprintf(w, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n", len(key), key, bigValue)
		want = "+OK\r\n"
	} else {
		fmt.Fprintf(w, "set %s 0 0 %d\r\n", key, bigValue)
	}
	for left := bigValue; left > 0; left -= len(chunk) {
		if _, err := w.Write(chunk[:min(left, len(chunk))]); err != nil {
			return err
		}
	}
	if _, err := w.WriteString("\r\n"); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	reply, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if reply != want {
		return fmt.Errorf("reply %q, want %q", reply, want)
	}
	return nil
}

// procMemory returns a memory figure of process pid from
// /proc/pid/status, in bytes.
func procMemory(t *testing.T, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("/proc/%d/status has no %s", pid, field)
	return 0
}

// resetPeak resets the process's peak RSS (VmHWM) to its RSS now.
func resetPeak(t *testing.T, pid int) {
	t.Helper()
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		t.Fatal(err)
	}
}
