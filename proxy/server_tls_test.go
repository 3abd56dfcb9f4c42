package proxy

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/testproc"
	"github.com/kolco-dev/kolco/internal/tlstest"
)

// tlsSetup is two authorities: one signs the servers' certificates, one
// the proxy's listener's and the clients'.
type tlsSetup struct {
	dir              string
	servers, clients *tlstest.CA
	server, listener tlstest.Pair
}

func newTLSSetup(t *testing.T) *tlsSetup {
	dir := t.TempDir()
	s := &tlsSetup{dir: dir, servers: tlstest.NewCA(t, dir, "servers"), clients: tlstest.NewCA(t, dir, "clients")}
	s.server = s.servers.Issue(t, "server", tlstest.Options{})
	s.listener = s.clients.Issue(t, "listener", tlstest.Options{})
	return s
}

// startMemcachedTLS starts memcached speaking TLS only, with the setup's
// server certificate.
func startMemcachedTLS(t *testing.T, s *tlsSetup) *memcached {
	port := freePort(t)
	return startMemcached(t, port, "-Z", "-o", fmt.Sprintf("ssl_chain_cert=%s,ssl_key=%s", s.server.CertFile, s.server.KeyFile))
}

// startRedisTLS starts redis-server speaking TLS only, with the setup's
// server certificate, asking clients for none.
func startRedisTLS(t *testing.T, s *tlsSetup) *redisServer {
	port := freePort(t)
	return startRedis(t, port, "--port", "0", "--tls-port", strconv.Itoa(port), "--tls-cert-file", s.server.CertFile,
		"--tls-key-file", s.server.KeyFile, "--tls-ca-cert-file", s.servers.CertFile, "--tls-auth-clients", "no")
}

// dialTLS connects to addr over TLS trusting the clients' authority, with
// cert as the client's certificate when given.
func (s *tlsSetup) dialTLS(t *testing.T, addr string, cert *tlstest.Pair) (*tls.Conn, error) {
	cfg := &tls.Config{RootCAs: s.clients.Pool(), ServerName: "127.0.0.1"}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{cert.Load(t)}
	}
	return tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
}

// roundTrip writes req and reads one line of reply.
func roundTrip(conn net.Conn, r *bufio.Reader, req string) (string, error) {
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, req); err != nil {
		return "", err
	}
	return r.ReadString('\n')
}

// TestTLSBothSides: a memcached pool and a Redis pool whose listeners
// speak TLS, in front of memcached -Z and redis-server --tls-port: a Go
// client over TLS is served; a plaintext client on the TLS port is told
// to use TLS; a client without a certificate where one is required, a
// proxy that trusts another authority than the servers', and one that
// verifies another name each get a clear error, and nothing else breaks.
func TestTLSBothSides(t *testing.T) {
	s := newTLSSetup(t)
	mc, rd := startMemcachedTLS(t, s), startRedisTLS(t, s)
	tlsKeys := fmt.Sprintf("  tls: {cert_file: %s, key_file: %s}\n  server_tls: {ca_file: %s}\n", s.listener.CertFile, s.listener.KeyFile, s.servers.CertFile)
	mp := startProxy(t, poolYAML(tlsKeys, mc))
	rp := startProxy(t, redisPoolYAML(tlsKeys, rd))
	for _, c := range []struct {
		name, addr, set, get, want string
	}{
		{"memcached", mp.Addr("p").String(), "set k 0 0 1\r\nv\r\n", "get k\r\n", "VALUE k 0 1\r\n"},
		{"redis", rp.Addr("p").String(), "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n", "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", "$1\r\n"},
	} {
		conn, err := s.dialTLS(t, c.addr, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		r := bufio.NewReader(conn)
		if got, err := roundTrip(conn, r, c.set); err != nil || (got != "STORED\r\n" && got != "+OK\r\n") {
			t.Errorf("%s over TLS both sides: set: %q %v", c.name, got, err)
		}
		if got, err := roundTrip(conn, r, c.get); err != nil || got != c.want {
			t.Errorf("%s over TLS both sides: get: %q %v", c.name, got, err)
		}
		conn.Close()

		plain, err := net.Dial("tcp", c.addr)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := roundTrip(plain, bufio.NewReader(plain), c.get)
		plain.Close()
		if !strings.Contains(got, "this port speaks TLS") {
			t.Errorf("%s: a plaintext client reads %q", c.name, got)
		}
	}

	// Mutual TLS: a client certificate signed by the clients' authority.
	mtls := fmt.Sprintf("  tls: {cert_file: %s, key_file: %s, client_ca_file: %s}\n  server_tls: {ca_file: %s}\n",
		s.listener.CertFile, s.listener.KeyFile, s.clients.CertFile, s.servers.CertFile)
	ap := startProxy(t, poolYAML(mtls, mc))
	client := s.clients.Issue(t, "client", tlstest.Options{})
	if conn, err := s.dialTLS(t, ap.Addr("p").String(), &client); err != nil {
		t.Errorf("mTLS with a client certificate: %v", err)
	} else {
		if got, err := roundTrip(conn, bufio.NewReader(conn), "get k\r\n"); err != nil || got != "VALUE k 0 1\r\n" {
			t.Errorf("mTLS: %q %v", got, err)
		}
		conn.Close()
	}
	if conn, err := s.dialTLS(t, ap.Addr("p").String(), nil); err == nil {
		_, err = roundTrip(conn, bufio.NewReader(conn), "get k\r\n")
		conn.Close()
		if err == nil || !strings.Contains(err.Error(), "certificate required") {
			t.Errorf("mTLS without a client certificate: %v, want the server's certificate required", err)
		}
	}

	checkTLSClients(t, s, mp.Addr("p").String(), rp.Addr("p").String())

	checkServerTLSErrors(t, s, mc)
	// A good proxy still serves after all that.
	conn, err := s.dialTLS(t, mp.Addr("p").String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := roundTrip(conn, bufio.NewReader(conn), "get k\r\n"); err != nil || got != "VALUE k 0 1\r\n" {
		t.Errorf("afterwards: %q %v", got, err)
	}
	conn.Close()
}

// TestTLSExpiredCertificateRefused: a listener certificate past its
// expiry is refused at start with an error that says so.
func TestTLSExpiredCertificateRefused(t *testing.T) {
	t.Parallel()
	s := newTLSSetup(t)
	old := s.clients.Issue(t, "expired", tlstest.Options{NotAfter: time.Now().Add(-time.Minute)})
	cfg, err := ParseConfig([]byte(poolYAML(fmt.Sprintf("  tls: {cert_file: %s, key_file: %s}\n", old.CertFile, old.KeyFile), startMemcached(t, 0))))
	if err != nil {
		t.Fatal(err)
	}
	err = New(cfg, nil).Start()
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Key != "tls" || !strings.Contains(err.Error(), "the certificate has expired") {
		t.Errorf("start with an expired certificate: %v, want a config error for tls saying it expired", err)
	}
}

// TestTLSCertRotationUnderLoad: eight clients over TLS run requests
// through a pool while its listener's certificate is replaced on disk,
// then replaced by a file that does not load: not a request fails, not a
// connection drops; new clients get the new certificate, the bad one is
// refused and the good one kept, and the expiry metric follows.
func TestTLSCertRotationUnderLoad(t *testing.T) {
	t.Parallel()
	s := newTLSSetup(t)
	mc := startMemcachedTLS(t, s)
	p := startProxy(t, poolYAML(fmt.Sprintf("  tls: {cert_file: %s, key_file: %s}\n  server_tls: {ca_file: %s}\n",
		s.listener.CertFile, s.listener.KeyFile, s.servers.CertFile), mc))
	addr := p.Addr("p").String()
	serial := func() int64 {
		conn, err := s.dialTLS(t, addr, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
	}
	if got := serial(); got != s.listener.Serial {
		t.Fatalf("serial %d, want %d", got, s.listener.Serial)
	}
	var stop atomic.Bool
	var failed, served atomic.Int64
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := s.dialTLS(t, addr, nil)
			if err != nil {
				failed.Add(1)
				return
			}
			defer conn.Close()
			r := bufio.NewReader(conn)
			for n := 0; !stop.Load() && n < 1_000_000; n++ {
				key := fmt.Sprintf("c%d:%d", i, n%100)
				got, err := roundTrip(conn, r, fmt.Sprintf("set %s 0 0 1\r\nv\r\n", key))
				if err != nil || got != "STORED\r\n" {
					failed.Add(1)
					return // a dropped connection ends the client: counted once
				}
				served.Add(1)
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	next := s.clients.Issue(t, "listener", tlstest.Options{NotAfter: time.Now().Add(48 * time.Hour)})
	eventually(t, "new clients to get the new certificate", func() bool { return serial() == next.Serial })
	expiry := p.certs.expiries()
	if len(expiry) != 1 || expiry[0].notAfter.Unix() != next.NotAfter.Unix() {
		t.Errorf("expiries %v, want the new certificate's %v", expiry, next.NotAfter)
	}
	if err := os.WriteFile(next.CertFile, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * certCheckEvery)
	if got := serial(); got != next.Serial {
		t.Errorf("after a bad certificate file: serial %d, want the good one's %d kept", got, next.Serial)
	}
	time.Sleep(200 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	t.Logf("%d requests over 8 TLS connections through two certificate changes: %d failed or dropped", served.Load(), failed.Load())
	if failed.Load() != 0 || served.Load() < 100 {
		t.Errorf("%d failed (of %d served)", failed.Load(), served.Load())
	}
}

// TestAdminTLS: with admin_tls the admin endpoint, /metrics and (with
// stats_tls) the stats port serve TLS only; two proxies naming each other
// in admin_peers with admin_peer_ca_file ask each other over https and
// agree; /metrics reports each certificate's expiry.
func TestAdminTLS(t *testing.T) {
	s := newTLSSetup(t)
	mc := startMemcached(t, 0)
	admin := s.clients.Issue(t, "admin", tlstest.Options{})
	ports := []int{freePort(t), freePort(t)}
	var servers []*Server
	for i := range 2 {
		yaml := fmt.Sprintf("kolco:\n  admin_listen: 127.0.0.1:%d\n  stats_listen: 127.0.0.1:0\n  stats_tls: true\n"+
			"  admin_tls: {cert_file: %s, key_file: %s}\n  admin_peer_ca_file: %s\n  admin_peers: [\"127.0.0.1:%d\"]\n",
			ports[i], admin.CertFile, admin.KeyFile, s.clients.CertFile, ports[1-i]) + poolYAML("  distribution: ring\n", mc)
		servers = append(servers, startProxy(t, yaml))
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: s.clients.Pool()}}}
	get := func(url string) (string, error) {
		resp, err := client.Get(url)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	base := fmt.Sprintf("https://127.0.0.1:%d", ports[0])
	if page, err := get(base + "/status"); err != nil || !strings.Contains(page, `data-agree="yes"`) {
		t.Errorf("the status page over https, asking its peer over https: %v\n%.600s", err, page)
	}
	if m, err := get(base + "/metrics"); err != nil || !strings.Contains(m, "kolco_proxy_tls_certificate_expiry_seconds{file=\""+admin.CertFile+"\"}") {
		t.Errorf("/metrics over https lacks the certificate's expiry: %v", err)
	}
	if resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/v1/pools", ports[0])); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("plain http to the https admin endpoint: %s", resp.Status)
		}
	}
	conn, err := tls.Dial("tcp", servers[0].StatsAddr().String(), &tls.Config{RootCAs: s.clients.Pool(), ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatalf("the stats port over TLS: %v", err)
	}
	doc, _ := io.ReadAll(conn)
	conn.Close()
	if !strings.Contains(string(doc), `"service":"nutcracker"`) {
		t.Errorf("the stats port over TLS sent %.200q", doc)
	}
}

// TestTLSBesidePlaintext: with tls.listen a pool serves plaintext on
// listen and TLS on tls.listen at once, one pool behind both: what a
// plaintext client writes a TLS client reads. --check says so.
func TestTLSBesidePlaintext(t *testing.T) {
	s := newTLSSetup(t)
	mc := startMemcached(t, 0)
	tlsAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	yaml := poolYAML(fmt.Sprintf("  tls: {cert_file: %s, key_file: %s, listen: %s}\n", s.listener.CertFile, s.listener.KeyFile, tlsAddr), mc)
	p := startProxy(t, yaml)
	plain, err := net.Dial("tcp", p.Addr("p").String())
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if got, err := roundTrip(plain, bufio.NewReader(plain), "set k 0 0 5\r\nplain\r\n"); err != nil || got != "STORED\r\n" {
		t.Fatalf("plaintext beside TLS: %q %v", got, err)
	}
	conn, err := s.dialTLS(t, tlsAddr, nil)
	if err != nil {
		t.Fatalf("TLS beside plaintext: %v", err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	if got, err := roundTrip(conn, r, "get k\r\n"); err != nil || got != "VALUE k 0 5\r\n" {
		t.Errorf("TLS beside plaintext reads %q %v", got, err)
	}
	cfg, err := ParseConfig([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := cfg.Explain(&b); err != nil || !strings.Contains(b.String(), "on "+tlsAddr+", beside plaintext on 127.0.0.1:0") {
		t.Errorf("--check: %v\n%s", err, b.String())
	}
}

// checkTLSClients: the TLS listeners serve the usual command-line clients,
// openssl s_client for memcached and redis-cli --tls for Redis.
func checkTLSClients(t *testing.T, s *tlsSetup, mcAddr, redisAddr string) {
	host, port, _ := net.SplitHostPort(mcAddr)
	cmd := exec.Command("openssl", "s_client", "-quiet", "-CAfile", s.clients.CertFile, "-connect", mcAddr, "-verify_return_error", "-servername", host)
	cmd.Stdin = strings.NewReader("get k\r\nquit\r\n") // quit: the proxy closes, and s_client ends
	out, err := runWithin(cmd, 10*time.Second)
	if err != nil || !strings.Contains(out, "VALUE k 0 1") {
		t.Errorf("openssl s_client through the memcached pool on port %s: %v\n%s", port, err, out)
	}
	host, port, _ = net.SplitHostPort(redisAddr)
	cli := exec.Command("redis-cli", "--tls", "--cacert", s.clients.CertFile, "-h", host, "-p", port, "GET", "k")
	if out, err := runWithin(cli, 10*time.Second); err != nil || strings.TrimSpace(out) != "v" {
		t.Errorf("redis-cli --tls through the Redis pool: %v %q", err, out)
	}
}

// runWithin runs cmd and returns its combined output, killing it after d.
func runWithin(cmd *exec.Cmd, d time.Duration) (string, error) {
	var b strings.Builder
	cmd.Stdout, cmd.Stderr = &b, &b
	if err := testproc.Start(cmd); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return b.String(), err
	case <-time.After(d):
		_ = cmd.Process.Kill()
		<-done
		return b.String(), fmt.Errorf("still running after %v", d)
	}
}

// checkServerTLSErrors: a proxy trusting another authority than the
// servers', verifying another name, or facing a server whose certificate
// has expired answers SERVER_ERROR naming the cause, and records it as
// the server's last error.
func checkServerTLSErrors(t *testing.T, s *tlsSetup, mc *memcached) {
	expired := s.servers.Issue(t, "expired-server", tlstest.Options{NotAfter: time.Now().Add(-time.Minute)})
	old := startMemcached(t, freePort(t), "-Z", "-o", fmt.Sprintf("ssl_chain_cert=%s,ssl_key=%s", expired.CertFile, expired.KeyFile))
	for _, c := range []struct {
		name, serverTLS, want string
		server                *memcached
	}{
		{"wrong authority", "  server_tls: {ca_file: " + s.clients.CertFile + "}\n", "certificate signed by unknown authority", mc},
		{"name mismatch", "  server_tls: {ca_file: " + s.servers.CertFile + ", server_name: cache.example}\n", "cache.example", mc},
		{"expired server certificate", "  server_tls: {ca_file: " + s.servers.CertFile + "}\n", "certificate has expired", old},
	} {
		bad := startProxy(t, poolYAML(c.serverTLS, c.server))
		conn, err := net.Dial("tcp", bad.Addr("p").String())
		if err != nil {
			t.Fatal(err)
		}
		got, _ := roundTrip(conn, bufio.NewReader(conn), "get k\r\n")
		conn.Close()
		errs := bad.testPool("p").backends[0].health.observedNow().lastErr
		t.Logf("%s: the client reads %q; the server's last error: %s", c.name, strings.TrimSpace(got), errs)
		if !strings.HasPrefix(got, "SERVER_ERROR") || !strings.Contains(errs, c.want) {
			t.Errorf("%s: the client reads %q, the server's error %q; want SERVER_ERROR and an error naming %q", c.name, got, errs, c.want)
		}
	}
}
