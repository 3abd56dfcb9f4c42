package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/testproc"
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
			exited, waitErr := startProgram(t, cmd, prog, listen)
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
			t.Logf("%s: %v after SIGINT", prog, *waitErr)
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

// TestFatalStartErrorsInLogFile: a proxy that cannot start - its address
// taken, its file broken - says why in the -o log file, as the real
// nutcracker does, and exits non-zero.
func TestFatalStartErrorsInLogFile(t *testing.T) {
	ncBin := realprog.Binary(t, "nutcracker", "nutcracker")
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := t.TempDir()
	busy := filepath.Join(dir, "busy.yml")
	if err := os.WriteFile(busy, []byte("p:\n  listen: "+taken.Addr().String()+"\n  servers:\n   - 127.0.0.1:11211:1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "broken.yml")
	if err := os.WriteFile(broken, []byte("p:\n  listen: 127.0.0.1:1\n  servers:\n   - 127.0.0.1:11211:0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, conf, want, ncWant string
		progs                    []string
	}{
		{"address in use", busy, "address already in use", "Address already in use", []string{"nutcracker (the real one)", "nutcracker"}},
		{"bad file", broken, "cannot start", "", []string{"nutcracker"}}, // nutcracker checks no weight of 0
	} {
		for _, prog := range tc.progs {
			t.Run(tc.name+"/"+prog, func(t *testing.T) {
				logPath := filepath.Join(t.TempDir(), "nutcracker.log")
				args := []string{"-c", tc.conf, "-s", strconv.Itoa(realprog.FreePorts(t, 1)[0]), "-a", "127.0.0.1", "-o", logPath}
				cmd := program(t, "nutcracker", args...)
				want := tc.want
				if prog != "nutcracker" {
					cmd, want = exec.Command(ncBin, args...), tc.ncWant
				}
				done := make(chan error, 1)
				if err := testproc.Start(cmd); err != nil {
					t.Fatal(err)
				}
				go func() { done <- cmd.Wait() }()
				select {
				case err := <-done:
					if err == nil {
						t.Errorf("exit 0")
					}
				case <-time.After(10 * time.Second):
					_ = cmd.Process.Kill()
					<-done
					t.Fatal("still running after 10 s")
				}
				b, _ := os.ReadFile(logPath)
				if !strings.Contains(string(b), want) {
					t.Errorf("the log file lacks %q:\n%s", want, b)
				}
			})
		}
	}
}

// startProgram starts cmd, named name, and waits until it listens on
// listen (host:port); Cleanup kills it. exited is closed once it has
// exited, with its Wait's error in *waitErr.
func startProgram(t *testing.T, cmd *exec.Cmd, name, listen string) (exited chan struct{}, waitErr *error) {
	t.Helper()
	exited, waitErr = startOwned(t, cmd)
	_, port, _ := strings.Cut(listen, ":")
	n, _ := strconv.Atoi(port)
	realprog.WaitListening(t, name, []int{n}, exited)
	return exited, waitErr
}

// startOwned starts cmd, killed when the test ends; exited is closed once
// it has ended, with what its wait returned in waitErr.
func startOwned(t *testing.T, cmd *exec.Cmd) (exited chan struct{}, waitErr *error) {
	t.Helper()
	if err := testproc.Start(cmd); err != nil {
		t.Fatal(err)
	}
	exited, waitErr = make(chan struct{}), new(error)
	go func() {
		*waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	return exited, waitErr
}

// TestSignalsTogetherEachTaken: signals that come while the proxy is busy
// with the last one are each taken when it is done. The configuration file
// is made a named pipe, so a SIGHUP's reload waits on reading it; SIGTTIN
// and SIGTTOU are sent meanwhile, then the file's text is written to the
// pipe: both must be logged. A channel with room for one signal kept the
// first and dropped the other, and in the fault schedule (seed 1042) a
// handover never began: its SIGUSR2 came during a reload, with a second
// SIGHUP already waiting.
func TestSignalsTogetherEachTaken(t *testing.T) {
	conf, listen, _ := unitFileConfig(t)
	text, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(t.TempDir(), "kolco.log")
	cmd := program(t, "kolco", "proxy", "-c", conf, "-o", logPath)
	startProgram(t, cmd, "kolco proxy", listen)
	pipe := conf + ".pipe"
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(pipe, conf); err != nil {
		t.Fatal(err)
	}
	logged := func(line string) bool {
		b, _ := os.ReadFile(logPath)
		return strings.Contains(string(b), line)
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the reload under way", func() bool { return logged("signal 1 (SIGHUP) received") })
	for _, sig := range []syscall.Signal{syscall.SIGTTIN, syscall.SIGTTOU} {
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
	}
	// Time for both to reach the process before the reload can end; on
	// the proxy that drops one, waiting longer only makes its loss surer.
	time.Sleep(200 * time.Millisecond)
	w, err := os.OpenFile(conf, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Write(text)
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the reload done", func() bool { return logged("configuration reloaded") })
	lines := []string{"signal 21 (SIGTTIN) received", "signal 22 (SIGTTOU) received"}
	taken := func() bool { return logged(lines[0]) && logged(lines[1]) }
	deadline := time.Now().Add(time.Duration(busy() * float64(5*time.Second)))
	for !taken() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !taken() {
		b, _ := os.ReadFile(logPath)
		t.Fatalf("SIGTTIN and SIGTTOU came during a reload: want each logged once it ended, got:\n%s", b)
	}
}
