package proxy

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/tlstest"
	"github.com/kolco-dev/kolco/membership/sentinel/sentineltest"
)

// TestSentinelOverTLS: a pool whose Sentinels speak TLS and ask for a
// client certificate (tls-auth-clients) follows them with tls set: its
// source reads the primaries and is told of a failover over TLS (asked
// only every minute, so only the announcement brings it at once), and
// replica reads find the shard's replica by asking them over TLS too.
func TestSentinelOverTLS(t *testing.T) {
	t.Parallel()
	c := sentineltest.StartTLS(t, 1000*time.Millisecond, "shard-a")
	sh := c.Shards[0]
	var y strings.Builder
	fmt.Fprintf(&y, "p:\n  listen: 127.0.0.1:0\n  redis: true\n  distribution: ring\n  timeout: 1000\n  replica_reads: {enabled: true}\n")
	fmt.Fprintf(&y, "  membership: {sentinel: {sentinels: [%s], interval: 60000, timeout: 500, tls: {ca_file: %s, cert_file: %s, key_file: %s}}}\n",
		strings.Join(c.SentinelTLSAddrs(), ", "), c.ClientTLS.CAFile, c.ClientTLS.CertFile, c.ClientTLS.KeyFile)
	// The address listed is not the primary's: only the Sentinels say where it is.
	fmt.Fprintf(&y, "  servers:\n   - %s:1 shard-a\n", sh.Replica.Addr)
	s := startProxy(t, y.String())
	addr := s.Addr("p").String()
	eventually(t, "shard-a at its primary, as the Sentinels say over TLS", func() bool {
		return s.testPool("p").backendNamed("shard-a").addr == sh.Primary.Addr
	})
	eventually(t, "the replica listed by the Sentinels over TLS and readable", func() bool {
		tr := trackerOf(s.testPool("p"))
		if tr == nil {
			return false
		}
		reps := tr.shards["shard-a"].replicas.Load()
		return reps != nil && len(*reps) == 1 && (*reps)[0].b.addr == sh.Replica.Addr && (*reps)[0].readable.Load()
	})
	cl := dialRedis(t, addr)
	if got := cl.do("SET", "k", "v"); got != "+OK\r\n" {
		t.Fatalf("SET through the proxy: %q", got)
	}

	killed := time.Now()
	sh.Primary.Kill()
	eventually(t, "shard-a at its promoted replica", func() bool {
		return s.testPool("p").backendNamed("shard-a").addr == sh.Replica.Addr
	})
	t.Logf("primary killed: the pool on its promoted replica after %v (down-after %v, Sentinels asked every minute)",
		time.Since(killed).Round(time.Millisecond), c.DownAfter)
	eventually(t, "writes through the proxy again", func() bool {
		return dialRedis(t, addr).do("SET", "k2", "v") == "+OK\r\n"
	})
}

// TestSentinelTLSVerifiesTheName: the configuration a pool reaches its
// Sentinels with verifies each one's certificate for the host of its
// address, an IP address too, or for server_name when set, against
// ca_file.
func TestSentinelTLSVerifiesTheName(t *testing.T) {
	dir := t.TempDir()
	ca := tlstest.NewCA(t, dir, "sentinels")
	caFile := ca.CertFile
	var certs certRegistry
	for _, tc := range []struct {
		names      []string // the peer certificate's
		serverName string   // server_name
		ok         bool
	}{
		{[]string{"127.0.0.1"}, "", true},
		{[]string{"10.9.9.9", "sentinel.example"}, "", false},
		{[]string{"sentinel.example"}, "sentinel.example", true},
		{[]string{"127.0.0.1"}, "sentinel.example", false},
	} {
		cfg, err := certs.sentinelTLS(&SentinelTLS{CAFile: caFile, ServerName: tc.serverName}, "")
		if err != nil {
			t.Fatal(err)
		}
		addr := tlsPeer(t, ca.Issue(t, strings.Join(tc.names, "-"), tlstest.Options{Names: tc.names}))
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conn, err = sentinelConn(context.Background(), conn, cfg, addr)
		if err == nil {
			conn.Close()
		}
		if (err == nil) != tc.ok {
			t.Errorf("a certificate for %v, server_name %q, the Sentinel at %s: %v, want accepted %v", tc.names, tc.serverName, addr, err, tc.ok)
		}
	}
}

// tlsPeer serves TLS with pair on 127.0.0.1 until the test ends, closing
// each connection after its handshake.
func tlsPeer(t *testing.T, pair tlstest.Pair) string {
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair.Load(t)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()
	return l.Addr().String()
}
