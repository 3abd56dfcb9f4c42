package proxy

import (
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// TestTLSCost measures what TLS on both sides costs the proxy: the same
// proxy build in a child process, once plaintext to clients and to
// memcached, once TLS to both (memcached -Z), driven by the same
// closed-loop gets and sets of 100-byte values in interleaved rounds; CPU
// per request is the proxy process's own (schedstat). Clients keep their
// connections, as pools do: the handshakes are not in the figures.
//
//	KOLCO_PROXY_BENCH=1 go test -run TestTLSCost -v ./proxy/
func TestTLSCost(t *testing.T) {
	if os.Getenv(benchEnv) != "1" {
		t.Skipf("set %s=1 to measure TLS against plaintext (about 20 s)", benchEnv)
	}
	s := newTLSSetup(t)
	plainMC, tlsMC := startMemcached(t, 0), startMemcachedTLS(t, s)
	plainAddr, tlsAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t)), fmt.Sprintf("127.0.0.1:%d", freePort(t))
	plainPid := startProxyProcess(t, os.Args[0], fmt.Sprintf("p:\n  listen: %s\n  servers: [\"%s:1\"]\n", plainAddr, plainMC.addr), plainAddr, 0)
	tlsPid := startProxyProcess(t, os.Args[0], fmt.Sprintf("p:\n  listen: %s\n  tls: {cert_file: %s, key_file: %s}\n  server_tls: {ca_file: %s}\n  servers: [\"%s:1\"]\n",
		tlsAddr, s.listener.CertFile, s.listener.KeyFile, s.servers.CertFile, tlsMC.addr), tlsAddr, 0)
	clientCfg := &tls.Config{RootCAs: s.clients.Pool(), ServerName: "127.0.0.1"}
	targets := []struct {
		name, addr string
		pid        int
		dial       func() (net.Conn, error)
	}{
		{"plaintext", plainAddr, plainPid, func() (net.Conn, error) { return net.Dial("tcp", plainAddr) }},
		{"TLS both sides", tlsAddr, tlsPid, func() (net.Conn, error) { return tls.Dial("tcp", tlsAddr, clientCfg) }},
	}
	val := strings.Repeat("v", 100)
	for _, tg := range targets {
		c, err := tg.dial()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "set bench:3 0 0 100\r\n%s\r\n", val)
		buf := make([]byte, 64)
		_, _ = c.Read(buf)
		c.Close()
	}
	loads := []struct {
		name string
		req  string
		cmd  memcache.Command
	}{{"get", "get bench:3\r\n", memcache.CmdGet}, {"set", "set bench:4 0 0 100\r\n" + val + "\r\n", memcache.CmdSet}}
	var report strings.Builder
	fmt.Fprintf(&report, "\n5 interleaved rounds of 500 ms, 16 clients; medians\n%-5s %-16s %10s %9s %9s %9s %7s\n", "load", "target", "ops/s", "p50", "p99", "cpu/op", "x cpu")
	for _, l := range loads {
		rs := map[string][]benchResult{}
		for range 5 {
			for _, tg := range targets {
				rs[tg.name] = append(rs[tg.name], driveDial(t, tg.dial, tg.addr, tg.pid, 16, 500*time.Millisecond, l.req, l.cmd, 1))
			}
		}
		cpu := func(name string) float64 {
			return median(rs[name], func(r benchResult) float64 { return float64(r.cpuPerOp()) })
		}
		for _, tg := range targets {
			r := rs[tg.name]
			fmt.Fprintf(&report, "%-5s %-16s %10.0f %9v %9v %9v %7.2f\n", l.name, tg.name, median(r, benchResult.rate),
				time.Duration(median(r, func(r benchResult) float64 { return float64(r.p50) })).Round(time.Microsecond),
				time.Duration(median(r, func(r benchResult) float64 { return float64(r.p99) })).Round(time.Microsecond),
				time.Duration(cpu(tg.name)).Round(100*time.Nanosecond), cpu(tg.name)/cpu("plaintext"))
		}
	}
	t.Log(report.String())
}
