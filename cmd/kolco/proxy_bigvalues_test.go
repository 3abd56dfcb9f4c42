package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
)

// TestBigValuesBesideNutcracker: eight clients each write a 100 MB value
// at once through a Redis pool with every setting at its default (kolco's
// timeout is 1 s; nutcracker's is none), through nutcracker and then
// through kolco, each a process of its own in front of one redis-server.
// kolco's timeout alone is stretched by the load: at load 44-75 on two
// cores six of eight 100 MB SETs were not answered by redis-server within
// the 1 s default, timed out and were not stored (STRLEN 0, as for a key
// that does not exist; a seventh was stored after its timeout).
// Each client sends its value but the last byte, and all send their last
// bytes together once all are that far, so that each proxy holds the
// eight values at once, whatever the machine's scheduling. Every value is
// stored through both, and kolco's peak RSS is at most 1.5 times
// nutcracker's; once the values are written kolco's RSS returns to the
// system within 30 s of idling.
func TestBigValuesBesideNutcracker(t *testing.T) {
	ncBin := realprog.Binary(t, "nutcracker", "nutcracker")
	rd := startRedisServer(t)
	ports := realprog.FreePorts(t, 2)
	dir := t.TempDir()
	peaks := map[string]int64{}
	for i, prog := range []string{"nutcracker", "kolco"} {
		conf := filepath.Join(dir, prog+".yml")
		y := fmt.Sprintf("rd:\n  listen: 127.0.0.1:%d\n  redis: true\n  servers:\n   - %s:1\n", ports[i], rd) // nutcracker takes no flow lists
		if prog == "kolco" && realprog.Busy() > 1 {
			y += fmt.Sprintf("  timeout: %d\n", int(1000*realprog.Busy())) // the default, 1 s, on a machine that is not busy
		}
		if err := os.WriteFile(conf, []byte(y), 0o600); err != nil {
			t.Fatal(err)
		}
		var cmd *exec.Cmd
		if prog == "nutcracker" {
			cmd = exec.Command(ncBin, "-c", conf, "-o", filepath.Join(dir, prog+".log"), "-s", fmt.Sprint(realprog.FreePorts(t, 1)[0]), "-a", "127.0.0.1")
		} else {
			cmd = program(t, "kolco", "proxy", "-c", conf, "-o", filepath.Join(dir, prog+".log"))
		}
		addr := fmt.Sprintf("127.0.0.1:%d", ports[i])
		startProgram(t, cmd, prog, addr)
		pid := cmd.Process.Pid
		resetPeak(t, pid)
		cpu0 := procCPU(t, pid)
		start := time.Now()
		key := prog + ":%d"
		writeBigTogether(t, addr, key)
		peaks[prog] = procMemory(t, pid, "VmHWM")
		t.Logf("%s: %d values of %d MB written at once in %v; peak RSS %d MiB, CPU %v", prog, bigWriters, bigValue>>20,
			time.Since(start).Round(time.Millisecond), peaks[prog]>>20, procCPU(t, pid)-cpu0)
		for w := range bigWriters {
			if got := redisDo(t, rd, "STRLEN", fmt.Sprintf(key, w)); got != fmt.Sprintf(":%d\r\n", bigValue) {
				t.Errorf("%s: value %d stored with length %q, want %d (EXISTS %q)", prog, w, got, bigValue, redisDo(t, rd, "EXISTS", fmt.Sprintf(key, w)))
			}
		}
		if prog == "kolco" {
			idle := time.Now()
			rss := procMemory(t, pid, "VmRSS")
			for rss > memoryOverhead && time.Since(idle) < 30*time.Second {
				time.Sleep(500 * time.Millisecond)
				rss = procMemory(t, pid, "VmRSS")
			}
			t.Logf("kolco: RSS %d MiB after %v idle", rss>>20, time.Since(idle).Round(100*time.Millisecond))
			if rss > memoryOverhead {
				t.Errorf("kolco: RSS %d MiB after 30 s idle: the values' memory was not returned", rss>>20)
			}
		}
	}
	if peaks["kolco"] > peaks["nutcracker"]*3/2 {
		t.Errorf("kolco's peak RSS %d MiB is over 1.5 times nutcracker's, %d MiB", peaks["kolco"]>>20, peaks["nutcracker"]>>20)
	}
}

// writeBigTogether writes bigWriters Redis values of bigValue bytes to
// the pool at addr, keys made of key and each writer's number, each on a
// connection of its own, their last bytes sent together once every writer
// has sent the rest, and fails the test unless each gets +OK.
func writeBigTogether(t *testing.T, addr, key string) {
	chunk := bytes.Repeat([]byte("v"), 1<<20)
	var wg, sent sync.WaitGroup
	sent.Add(bigWriters)
	errs := make([]error, bigWriters)
	for w := range bigWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			once := sync.OnceFunc(sent.Done)
			defer once() // a writer that failed holds no one back
			errs[w] = func() error {
				conn, err := net.Dial("tcp", addr)
				if err != nil {
					return err
				}
				defer conn.Close()
				_ = conn.SetDeadline(time.Now().Add(time.Duration(float64(90*time.Second) * realprog.Busy()))) // a guard; the test does not rely on it
				k := fmt.Sprintf(key, w)
				if _, err := fmt.Fprintf(conn, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n", len(k), k, bigValue); err != nil {
					return err
				}
				for left := bigValue - 1; left > 0; left -= len(chunk) {
					if _, err := conn.Write(chunk[:min(left, len(chunk))]); err != nil {
						return err
					}
				}
				once()
				sent.Wait()
				if _, err := conn.Write([]byte("v\r\n")); err != nil {
					return err
				}
				reply, err := bufio.NewReader(conn).ReadString('\n')
				if err != nil {
					return err
				}
				if reply != "+OK\r\n" {
					return fmt.Errorf("reply %q", reply)
				}
				return nil
			}()
		}()
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", w, err)
		}
	}
}

// redisDo sends one request of args to the Redis server at addr and
// returns its reply's first line.
func redisDo(t *testing.T, addr string, args ...string) string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(conn, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(conn, "$%d\r\n%s\r\n", len(a), a)
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return line
}

// procCPU returns the CPU time process pid has used, user and system.
func procCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	var utime, stime int64
	if _, err := fmt.Sscan(f[11], &utime); err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Sscan(f[12], &stime); err != nil {
		t.Fatal(err)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond // USER_HZ: 100 on Linux
}
