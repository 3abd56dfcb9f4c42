package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/faults"
	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/testproc"
)

// mainEnv makes the test binary run main, as the kolco program, so that
// tests can run the program itself: under another name (nutcracker), as a
// daemon, handing over its sockets.
const mainEnv = "KOLCO_TEST_MAIN"

func TestMain(m *testing.M) {
	faults.Reap() // returns at once unless the process is a fault schedule's reaper
	if os.Getenv(mainEnv) == "1" {
		// A proxy this process starts on SIGUSR2, or as a daemon, has no
		// parent-death signal: it exits once the tests are gone.
		testproc.FollowOwner()
		main()
	}
	os.Exit(testproc.Main(m.Run))
}

// program returns a command running this test binary as the program named
// name (a symlink to it when name is not kolco) with args.
func program(t *testing.T, name string, args ...string) *exec.Cmd {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if name != "kolco" {
		link := filepath.Join(t.TempDir(), name)
		if err := os.Symlink(bin, link); err != nil {
			t.Fatal(err)
		}
		bin = link
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	return cmd
}

// unitFileConfig writes a one-pool nutcracker.yml in front of a real
// memcached and returns its path, the pool's address and the memcached's.
func unitFileConfig(t *testing.T) (conf, listen, server string) {
	server = startMemcached(t)
	listen = fmt.Sprintf("127.0.0.1:%d", realprog.FreePorts(t, 1)[0])
	conf = filepath.Join(t.TempDir(), "nutcracker.yml")
	y := fmt.Sprintf("alpha:\n  listen: %s\n  hash: fnv1a_64\n  distribution: ketama\n  timeout: 10000\n  servers:\n   - %s:1\n", listen, server)
	if err := os.WriteFile(conf, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	return conf, listen, server
}

// TestNutcrackerCommandLine runs a service's nutcracker command line,
// "nutcracker -c FILE -s PORT -v 6 -o LOG", with only the program changed:
// as "kolco proxy" and as kolco installed under the name nutcracker. Each
// serves the pool, the stats port and the log file, and shuts down on
// SIGTERM. (-a 127.0.0.1 keeps the stats port off the machine's other
// addresses, where nutcracker's default, 0.0.0.0, would put it.)
func TestNutcrackerCommandLine(t *testing.T) {
	for _, prog := range []struct{ name, sub string }{{"kolco", "proxy"}, {"nutcracker", ""}} {
		t.Run(prog.name, func(t *testing.T) {
			conf, listen, _ := unitFileConfig(t)
			statsPort := realprog.FreePorts(t, 1)[0]
			logPath := filepath.Join(t.TempDir(), "nutcracker.log")
			args := []string{"-c", conf, "-s", strconv.Itoa(statsPort), "-a", "127.0.0.1", "-v", "6", "-o", logPath, "-m", "16384"}
			if prog.sub != "" {
				args = append([]string{prog.sub}, args...)
			}
			cmd := program(t, prog.name, args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			t.Cleanup(func() { // after the process is gone: cleanups run last first
				if t.Failed() {
					t.Logf("%s's stderr:\n%s", prog.name, stderr.String())
				}
			})
			exited, waitErr := startProgram(t, cmd, prog.name, listen)
			c := dialMC(t, listen)
			if got := c.set("unit"); got != "STORED\r\n" {
				t.Fatalf("set: %q", got)
			}
			eventually(t, "the stats port", func() bool {
				return strings.Contains(readUntilClosed(t, fmt.Sprintf("127.0.0.1:%d", statsPort)), `"alpha":`)
			})
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			<-exited
			if *waitErr != nil {
				t.Fatalf("exit after SIGTERM: %v\n%s", *waitErr, stderr.String())
			}
			log, _ := os.ReadFile(logPath)
			for _, want := range []string{"listening", "shut down"} {
				if !strings.Contains(string(log), want) {
					t.Errorf("log lacks %q:\n%s", want, log)
				}
			}
		})
	}
}

// readUntilClosed reads what a server at addr sends before closing.
func readUntilClosed(t *testing.T, addr string) string {
	c := dialMC(t, addr)
	var b bytes.Buffer
	_, _ = b.ReadFrom(c.conn)
	return b.String()
}

// TestNutcrackerTestConf: -t checks a configuration, as nutcracker's does:
// exit 0 for a good file, 1 for a bad one.
func TestNutcrackerTestConf(t *testing.T) {
	conf, _, _ := unitFileConfig(t)
	bad := filepath.Join(t.TempDir(), "bad.yml")
	if err := os.WriteFile(bad, []byte("alpha:\n  listen: nowhere\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"kolco", []string{"proxy", "-t", "-c", conf}, 0},
		{"nutcracker", []string{"-t", "-c", conf}, 0},
		{"nutcracker", []string{"--test-conf", "--conf-file=" + bad}, 1},
	} {
		err := testproc.Run(program(t, tc.name, tc.args...))
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.code {
			t.Errorf("%s %v: exit %d, want %d", tc.name, tc.args, code, tc.code)
		}
	}
}

// TestNutcrackerDaemonize: -d returns once the daemon serves, in a session
// of its own, with its pid (not the starter's) in the pid file; the
// daemon goes on serving after the starter exits, and removes the pid file
// when it stops.
func TestNutcrackerDaemonize(t *testing.T) {
	conf, listen, _ := unitFileConfig(t)
	dir := t.TempDir()
	pidPath, logPath := filepath.Join(dir, "nutcracker.pid"), filepath.Join(dir, "nutcracker.log")
	starter := program(t, "nutcracker", "-d", "-c", conf, "-p", pidPath, "-o", logPath, "-s", strconv.Itoa(realprog.FreePorts(t, 1)[0]), "-a", "127.0.0.1")
	var out bytes.Buffer
	starter.Stdout, starter.Stderr = &out, &out
	if err := testproc.Start(starter); err != nil {
		t.Fatal(err)
	}
	bound := time.AfterFunc(30*time.Second, func() { _ = starter.Process.Kill() })
	err := starter.Wait()
	bound.Stop()
	if err != nil {
		t.Fatalf("nutcracker -d: %v\n%s", err, out.String())
	}
	b, err := os.ReadFile(pidPath)
	if err != nil {
		t.Fatalf("no pid file once -d returned: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid == starter.Process.Pid {
		t.Fatalf("pid file %q: want the daemon's pid, not the starter's %d", b, starter.Process.Pid)
	}
	t.Cleanup(func() { _ = testproc.KillOwn(pid, syscall.SIGKILL) })
	if sid := sessionOf(t, pid); sid != pid {
		t.Errorf("the daemon %d is in session %d, want its own", pid, sid)
	}
	c := dialMC(t, listen)
	if got := c.set("daemon"); got != "STORED\r\n" {
		t.Fatalf("set through the daemon: %q", got)
	}
	if err := testproc.KillOwn(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the daemon gone", func() bool { return testproc.Gone(pid) })
	if _, err := os.Stat(pidPath); !os.IsNotExist(err) {
		t.Errorf("pid file left behind: %v", err)
	}
}

// sessionOf returns the session id of process pid, from /proc.
func sessionOf(t *testing.T, pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// pid (comm) state ppid pgrp session ...: comm may hold spaces, so
	// count from the last ')'.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	sid, _ := strconv.Atoi(f[3])
	return sid
}

// TestVersion: kolco --version, kolco version, kolco proxy -V and
// nutcracker -V print the version and the build's Go toolchain.
func TestVersion(t *testing.T) {
	for _, tc := range []struct {
		argv0 string
		args  []string
	}{
		{"kolco", []string{"--version"}}, {"kolco", []string{"version"}},
		{"kolco", []string{"proxy", "-V"}}, {"/usr/sbin/nutcracker", []string{"-V"}}, {"nutcracker", []string{"--version"}},
	} {
		var out, errOut bytes.Buffer
		if code := runProgram(tc.argv0, tc.args, nil, &out, &errOut); code != 0 {
			t.Errorf("%s %v: exit %d: %s", tc.argv0, tc.args, code, errOut.String())
			continue
		}
		if got := out.String(); got != versionText() || !strings.HasPrefix(got, "kolco ") || !strings.Contains(got, runtime.Version()) {
			t.Errorf("%s %v printed %q", tc.argv0, tc.args, got)
		}
	}
}

// TestNutcrackerStatsPortFromFile: run as nutcracker without -s, the proxy
// serves its stats port where the file's kolco.stats_listen says (else it
// would take nutcracker's default, 0.0.0.0:22222).
func TestNutcrackerStatsPortFromFile(t *testing.T) {
	conf, listen, _ := unitFileConfig(t)
	statsPort := realprog.FreePorts(t, 1)[0]
	body, _ := os.ReadFile(conf)
	y := fmt.Sprintf("kolco:\n  stats_listen: 127.0.0.1:%d\n%s", statsPort, body)
	if err := os.WriteFile(conf, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	exited, _ := startOwned(t, program(t, "nutcracker", "-c", conf))
	_, port, _ := strings.Cut(listen, ":")
	n, _ := strconv.Atoi(port)
	realprog.WaitListening(t, "nutcracker", []int{n, statsPort}, exited)
	if doc := readUntilClosed(t, fmt.Sprintf("127.0.0.1:%d", statsPort)); !strings.Contains(doc, `"alpha":`) {
		t.Errorf("stats port: %q", doc)
	}
}
