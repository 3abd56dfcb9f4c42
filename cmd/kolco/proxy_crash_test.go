package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
)

// TestSegvAsNutcracker: a SIGSEGV sent with kill makes the real nutcracker
// and kolco installed as nutcracker log "signal 11 (SIGSEGV) received,
// core dumping" and die of the signal. kolco's log said nothing, and it
// exited 2 with Go's trace on stderr. No core is written: the test's core
// size limit is 1, which the kernel reads as "no core" for a file (smaller
// than a page) and for a core_pattern that pipes to a program (fs/coredump.c
// skips a limit of 1; a limit of 0 is ignored there).
func TestSegvAsNutcracker(t *testing.T) {
	ncBin := realprog.Binary(t, "nutcracker", "nutcracker")
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_CORE, &lim); err != nil {
		t.Fatal(err)
	}
	lim.Cur = min(1, lim.Max) // the programs inherit it: no core from this test
	if err := syscall.Setrlimit(syscall.RLIMIT_CORE, &lim); err != nil {
		t.Fatal(err)
	}
	for _, prog := range []string{"nutcracker (the real one)", "nutcracker"} {
		t.Run(prog, func(t *testing.T) {
			conf, listen, _ := unitFileConfig(t)
			logPath := filepath.Join(t.TempDir(), "nutcracker.log")
			args := []string{"-c", conf, "-s", strconv.Itoa(realprog.FreePorts(t, 1)[0]), "-a", "127.0.0.1", "-o", logPath}
			var cmd *exec.Cmd
			var exited chan struct{}
			var waitErr *error
			if prog == "nutcracker" {
				cmd = program(t, "nutcracker", args...)
				exited, waitErr = startProgram(t, cmd, prog, listen)
			} else {
				cmd = exec.Command(ncBin, args...)
				exited, waitErr = startIdle(t, cmd, listen)
			}
			if err := cmd.Process.Signal(syscall.SIGSEGV); err != nil {
				t.Fatal(err)
			}
			waitDying(t, cmd, exited)
			var ee *exec.ExitError
			if !errors.As(*waitErr, &ee) {
				t.Fatalf("after SIGSEGV: %v, want killed by it", *waitErr)
			}
			if ws := ee.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGSEGV {
				t.Errorf("after SIGSEGV: %v, want killed by it", *waitErr)
			}
			b, _ := os.ReadFile(logPath)
			if !strings.Contains(string(b), "signal 11 (SIGSEGV) received, core dumping") {
				t.Errorf("the log lacks the signal:\n%s", b)
			}
		})
	}
}

// waitDying waits for a process sent a fatal signal to end, for a bound
// stretched by the machine's load; past it the test fails with what the
// kernel says the process is doing (its state and wait channel), and the
// process is killed.
func waitDying(t *testing.T, cmd *exec.Cmd, exited <-chan struct{}) {
	t.Helper()
	bound := time.Duration(30*busy()) * time.Second
	select {
	case <-exited:
		return
	case <-time.After(bound):
	}
	pid := strconv.Itoa(cmd.Process.Pid)
	stat, _ := os.ReadFile("/proc/" + pid + "/stat")
	wchan, _ := os.ReadFile("/proc/" + pid + "/wchan")
	pattern, _ := os.ReadFile("/proc/sys/kernel/core_pattern")
	_ = cmd.Process.Kill()
	<-exited
	t.Fatalf("still running %v after the signal: stat %q, wchan %q, core_pattern %q", bound, stat, wchan, pattern)
}

// startIdle starts the real nutcracker and returns once it listens on
// listen and its main thread waits in epoll, without connecting to it.
// Its SIGSEGV handler calls backtrace(3), whose first call loads
// libgcc_s with malloc: a signal that lands inside a malloc of the main
// thread (reading the connection startProgram probes readiness with)
// deadlocks it on the allocator's lock for good, as gdb showed. The test
// compares what each program does with the signal, so nutcracker is sent
// it while idle.
func startIdle(t *testing.T, cmd *exec.Cmd, listen string) (exited chan struct{}, waitErr *error) {
	t.Helper()
	exited, waitErr = startOwned(t, cmd)
	_, port, _ := strings.Cut(listen, ":")
	n, _ := strconv.Atoi(port)
	local := fmt.Sprintf("0100007F:%04X", n) // 127.0.0.1:port as /proc/net/tcp writes it
	wchan := fmt.Sprintf("/proc/%d/task/%d/wchan", cmd.Process.Pid, cmd.Process.Pid)
	deadline := time.Now().Add(realprog.Patience)
	for {
		tcp, _ := os.ReadFile("/proc/net/tcp")
		w, _ := os.ReadFile(wchan)
		if listening(string(tcp), local) && strings.Contains(string(w), "epoll") {
			return exited, waitErr
		}
		select {
		case <-exited:
			t.Fatalf("nutcracker exited during startup: %v", *waitErr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("nutcracker not idle on %s after %v (main thread in %q)", listen, realprog.Patience, w)
		}
		time.Sleep(20 * time.Millisecond) // polling for readiness, not ordering
	}
}

// listening reports whether /proc/net/tcp's text has a socket listening
// (state 0A) on local.
func listening(tcp, local string) bool {
	for _, line := range strings.Split(tcp, "\n") {
		f := strings.Fields(line)
		if len(f) > 3 && f[1] == local && f[3] == "0A" {
			return true
		}
	}
	return false
}
