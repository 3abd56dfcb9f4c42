package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/kolco-dev/kolco/internal/realprog"
)

// TestSignalsAsNutcracker sends the real nutcracker and kolco installed as
// nutcracker, each started with -v 5, the signals nutcracker handles, one
// at a time, and requires each program's log to say each by number and
// name with nutcracker's words, the log level to go up on SIGTTIN and down
// on SIGTTOU (kolco's debug lines - a client's connection - appear at 7
// and stop at 6), and SIGINT to end the program.
func TestSignalsAsNutcracker(t *testing.T) {
	ncBin := realprog.Binary(t, "nutcracker", "nutcracker")
	for _, prog := range []string{"nutcracker (the real one)", "nutcracker"} {
		t.Run(prog, func(t *testing.T) {
			conf, listen, _ := unitFileConfig(t)
			logPath := filepath.Join(t.TempDir(), "nutcracker.log")
			statsPort := realprog.FreePorts(t, 1)[0]
			args := []string{"-c", conf, "-s", strconv.Itoa(statsPort), "-a", "127.0.0.1", "-v", "5", "-o", logPath}
			var cmd *exec.Cmd
			real := prog != "nutcracker"
			if real {
				cmd = exec.Command(ncBin, args...)
			} else {
				cmd = program(t, "nutcracker", args...)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan struct{})
			var waitErr error
			go func() {
				waitErr = cmd.Wait()
				close(exited)
			}()
			t.Cleanup(func() {
				_ = cmd.Process.Kill()
				<-exited
			})
			_, port, _ := strings.Cut(listen, ":")
			n, _ := strconv.Atoi(port)
			realprog.WaitListening(t, prog, []int{n}, exited)
			logged := func() string {
				b, _ := os.ReadFile(logPath)
				return string(b)
			}
			// debugLines counts kolco's debug lines for a client's
			// connection after one more connection.
			debugLines := func() int {
				c := dialMC(t, listen)
				if got := c.set("k"); got != "STORED\r\n" {
					t.Fatalf("set: %q", got)
				}
				c.conn.Close()
				return strings.Count(logged(), "client accepted")
			}
			signal := func(sig syscall.Signal, line string) {
				t.Helper()
				before := strings.Count(logged(), line)
				if err := cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				eventually(t, fmt.Sprintf("%q logged", line), func() bool { return strings.Count(logged(), line) > before })
			}
			if !real && debugLines() != 0 {
				t.Errorf("debug lines at -v 5:\n%s", logged())
			}
			signal(syscall.SIGTTIN, "signal 21 (SIGTTIN) received, up logging level")
			signal(syscall.SIGTTIN, "signal 21 (SIGTTIN) received, up logging level")
			var atDebug int
			if !real {
				if atDebug = debugLines(); atDebug == 0 {
					t.Errorf("no debug lines at -v 7:\n%s", logged())
				}
			}
			signal(syscall.SIGTTOU, "signal 22 (SIGTTOU) received, down logging level")
			if !real && debugLines() != atDebug {
				t.Errorf("debug lines at -v 6:\n%s", logged())
			}
			signal(syscall.SIGHUP, "signal 1 (SIGHUP) received, reopening log file")
			signal(syscall.SIGINT, "signal 2 (SIGINT) received, exiting")
			<-exited
			t.Logf("%s: %v after SIGINT", prog, waitErr)
		})
	}
}

// TestProxyVerbose11LogsDebug: -v 11, nutcracker's most verbose, logs
// kolco's debug lines: each client's and each server connection opened and
// closed.
func TestProxyVerbose11LogsDebug(t *testing.T) {
	conf, listen, server := unitFileConfig(t)
	logPath := filepath.Join(t.TempDir(), "proxy.log")
	serveRun(t, proxyRun{path: conf, logPath: logPath, watch: -1, verbose: 11})
	c := dialMC(t, listen)
	if got := c.set("k"); got != "STORED\r\n" {
		t.Fatalf("set: %q", got)
	}
	c.conn.Close()
	for _, want := range []string{"client accepted", "client closed", "server connection opened"} {
		eventually(t, want+" logged", func() bool {
			b, _ := os.ReadFile(logPath)
			return strings.Contains(string(b), want) && strings.Contains(string(b), server)
		})
	}
}
