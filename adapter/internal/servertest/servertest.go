// Package servertest starts the real servers the adapters' tests run
// against - memcached and redis-server on 127.0.0.1 - and the kolco
// command whose answers they are held to. It is for tests only.
package servertest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/testproc"
)

// Server is a server process started by a test; Cleanup stops it.
type Server struct {
	// Addr is "127.0.0.1:port".
	Addr string
	// Port is the port it listens on.
	Port int

	t      testing.TB
	name   string
	args   []string
	cmd    *exec.Cmd
	exited chan struct{}
}

// Memcached starts memcached on a free port.
func Memcached(t testing.TB) *Server {
	t.Helper()
	bin := realprog.Binary(t, "memcached", "memcached")
	port := realprog.FreePorts(t, 1)[0]
	args := []string{"-l", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "0", "-m", "64", "-t", "1"}
	if os.Geteuid() == 0 {
		args = append(args, "-u", "root") // memcached refuses to run as root otherwise
	}
	return start(t, bin, port, args)
}

// Redis starts redis-server on a free port, without persistence.
func Redis(t testing.TB) *Server {
	t.Helper()
	bin := realprog.Binary(t, "redis-server", "redis-server")
	port := realprog.FreePorts(t, 1)[0]
	args := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--daemonize", "no", "--dir", t.TempDir()}
	return start(t, bin, port, args)
}

func start(t testing.TB, bin string, port int, args []string) *Server {
	t.Helper()
	s := &Server{Addr: fmt.Sprintf("127.0.0.1:%d", port), Port: port, t: t, name: filepath.Base(bin), args: append([]string{bin}, args...)}
	s.Start()
	t.Cleanup(s.Stop)
	return s
}

// Start starts the server again on its port after Stop, and waits until it
// listens.
func (s *Server) Start() {
	s.t.Helper()
	s.cmd = exec.Command(s.args[0], s.args[1:]...)
	if err := testproc.Start(s.cmd); err != nil {
		s.t.Fatal(err)
	}
	s.exited = make(chan struct{})
	cmd, exited := s.cmd, s.exited
	go func() { _ = cmd.Wait(); close(exited) }()
	realprog.WaitListening(s.t, s.name, []int{s.Port}, s.exited)
}

// Stop kills the server and waits until it has exited.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.exited
	s.cmd = nil
}

var kolco struct {
	once sync.Once
	dir  string
	path string
	err  error
	out  []byte
}

// Kolco returns the path of the kolco command built from this module, once
// per test binary.
func Kolco(t testing.TB) string {
	t.Helper()
	kolco.once.Do(func() {
		kolco.dir, kolco.err = os.MkdirTemp("", "kolco-bin")
		if kolco.err != nil {
			return
		}
		kolco.path = filepath.Join(kolco.dir, "kolco")
		cmd := exec.Command("go", "build", "-o", kolco.path, "github.com/kolco-dev/kolco/cmd/kolco")
		kolco.out, kolco.err = testproc.CombinedOutput(cmd)
	})
	if kolco.err != nil {
		t.Fatalf("building kolco: %v\n%s", kolco.err, kolco.out)
	}
	return kolco.path
}

// Main runs a package's tests, then removes the kolco command built for
// them, and fails when a process they started outlives them (see
// testproc.Main): call it from TestMain.
func Main(m *testing.M) int {
	return testproc.Main(func() int {
		code := m.Run()
		if kolco.dir != "" {
			os.RemoveAll(kolco.dir)
		}
		return code
	})
}

// Locate runs "kolco locate" with args over keys and returns each key's
// owner, in the order of keys.
func Locate(t testing.TB, keys []string, args ...string) []string {
	t.Helper()
	cmd := exec.Command(Kolco(t), append([]string{"locate"}, args...)...)
	cmd.Stdin = strings.NewReader(strings.Join(keys, "\n") + "\n")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := testproc.Output(cmd)
	if err != nil {
		t.Fatalf("kolco locate %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	owners := make([]string, 0, len(keys))
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		key, owner, ok := strings.Cut(sc.Text(), "\t")
		if !ok || len(owners) >= len(keys) || key != keys[len(owners)] {
			t.Fatalf("kolco locate: unexpected line %q", sc.Text())
		}
		owners = append(owners, owner)
	}
	if len(owners) != len(keys) {
		t.Fatalf("kolco locate answered %d of %d keys", len(owners), len(keys))
	}
	return owners
}
