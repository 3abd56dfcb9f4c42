// Package etcdtest starts a real etcd server on 127.0.0.1 for tests, in the
// way net/http/httptest starts an HTTP server: on free ports, with a
// temporary data directory, killed when the test ends. A test can stop and
// restart it to check what a client does while the store is away.
//
// The server is the etcd binary on PATH (Debian's etcd-server package). When
// it is missing the test is skipped, or failed when the environment variable
// CI is "true".
package etcdtest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/testproc"
)

// Config sets up a server. The zero value is a plain HTTP server.
type Config struct {
	// CertFile and KeyFile, when both are set, make the server speak TLS
	// to its clients with that certificate; Endpoint then starts with
	// https://.
	CertFile, KeyFile string
}

// Server is an etcd server started by a test.
type Server struct {
	// Endpoint is the client URL, such as "http://127.0.0.1:40213".
	Endpoint string

	t          testing.TB
	bin, dir   string
	args       []string
	clientPort int
	cfg        Config

	mu     sync.Mutex // guards cmd and exited
	cmd    *exec.Cmd
	exited chan struct{}

	logMu sync.Mutex // guards log
	log   bytes.Buffer
}

// Start starts etcd and waits until it serves (realprog.Patience at most). The test's
// Cleanup kills it and removes its data.
func Start(t testing.TB, cfg Config) *Server {
	t.Helper()
	bin := realprog.Binary(t, "etcd-server", "etcd")
	ports := realprog.RestartablePorts(t, 2)
	s := &Server{t: t, bin: bin, dir: t.TempDir(), clientPort: ports[0], cfg: cfg}
	scheme := "http"
	if cfg.CertFile != "" && cfg.KeyFile != "" {
		scheme = "https"
	}
	client := fmt.Sprintf("%s://127.0.0.1:%d", scheme, ports[0])
	peer := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	s.Endpoint = client
	s.args = []string{
		"--name", "test",
		"--data-dir", filepath.Join(s.dir, "data"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "test=" + peer,
		// A single member elects itself at once; the short ticks keep
		// the shortest lease (1.5 election timeouts) near one second.
		"--heartbeat-interval", "50", "--election-timeout", "500",
		"--logger", "zap", "--log-outputs", "stderr", "--log-level", "error",
	}
	if scheme == "https" {
		s.args = append(s.args, "--cert-file", cfg.CertFile, "--key-file", cfg.KeyFile)
	}
	t.Cleanup(s.Stop)
	s.Restart()
	return s
}

// Restart starts the server again on the same port and data after Stop;
// it waits until the server serves. Calling it while the server runs is a
// mistake the test is failed for.
func (s *Server) Restart() {
	s.t.Helper()
	s.mu.Lock()
	if s.cmd != nil {
		s.mu.Unlock()
		s.t.Fatal("etcdtest: Restart of a running server")
	}
	cmd := exec.Command(s.bin, s.args...)
	cmd.Stdout = io.Discard
	cmd.Stderr = &lockedWriter{mu: &s.logMu, w: &s.log}
	if err := testproc.Start(cmd); err != nil {
		s.mu.Unlock()
		s.t.Fatal(err)
	}
	exited := make(chan struct{})
	s.cmd, s.exited = cmd, exited
	s.mu.Unlock()
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	s.waitHealthy(exited)
}

// Stop kills the server, as a crash would, and waits until it is gone. Its
// data stays for Restart. Stopping a stopped server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-exited
}

// Log returns what the server wrote on its standard error (errors only).
func (s *Server) Log() string {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return s.log.String()
}

// waitHealthy polls the server's /health until it reports a leader, for
// realprog.Patience at most, failing the test if the server exits first.
func (s *Server) waitHealthy(exited <-chan struct{}) {
	s.t.Helper()
	client := &http.Client{Timeout: time.Second, Transport: s.transport()}
	deadline := time.Now().Add(realprog.Patience)
	for {
		resp, err := client.Get(s.Endpoint + "/health")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && bytes.Contains(body, []byte(`"true"`)) {
				return
			}
		}
		select {
		case <-exited:
			s.t.Fatalf("etcd exited while starting: %s", s.Log())
		default:
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("etcd not healthy after %v (last error %v): %s", realprog.Patience, err, s.Log())
		}
		time.Sleep(20 * time.Millisecond) // polling an external process with a deadline
	}
}

// transport trusts the server's own certificate for the health check.
func (s *Server) transport() http.RoundTripper {
	if s.cfg.CertFile == "" {
		return http.DefaultTransport
	}
	pool, err := certPool(s.cfg.CertFile)
	if err != nil {
		s.t.Fatal(err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig.RootCAs = pool
	return tr
}

// lockedWriter serialises writes from the process's output copier with
// readers of the log.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
