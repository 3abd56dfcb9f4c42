package sentinel_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/tlstest"
	"github.com/kolco-dev/kolco/membership"
	"github.com/kolco-dev/kolco/membership/sentinel/sentineltest"
)

// TestTLS: Sentinels that speak TLS and ask clients for a certificate are
// read over TLS, and followed through a failover they announce on the
// same TLS connection (the source's interval is a minute, so only the
// announcement brings the new primary at once). Without TLS, without a
// client certificate, trusting another authority, or verifying a name
// their certificate is not for, the source cannot read them.
func TestTLS(t *testing.T) {
	c := sentineltest.StartTLS(t, 1000*time.Millisecond, "shard-a")
	sh := c.Shards[0]
	pem, err := os.ReadFile(c.ClientTLS.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	cert, err := tls.LoadX509KeyPair(c.ClientTLS.CertFile, c.ClientTLS.KeyFile)
	if err != nil {
		t.Fatal(err)
	}

	other := tlstest.NewCA(t, t.TempDir(), "other")
	for name, cfg := range map[string]*tls.Config{
		"plaintext":             nil,
		"no client certificate": {RootCAs: roots},
		"another authority":     {RootCAs: other.Pool(), Certificates: []tls.Certificate{cert}},
		"another name":          {RootCAs: roots, Certificates: []tls.Certificate{cert}, ServerName: "10.9.9.9"},
	} {
		s := source(c)
		s.Sentinels, s.TLS = c.SentinelTLSAddrs(), cfg
		if v, err := s.Read(context.Background()); err == nil {
			t.Errorf("%s: read %+v from Sentinels that speak TLS and ask for a certificate", name, v.Nodes)
		}
	}

	s := source(c)
	s.Sentinels, s.Interval = c.SentinelTLSAddrs(), time.Minute
	s.TLS = &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{cert}}
	w := membership.Watch(context.Background(), s)
	defer w.Close()
	if v := next(t, w, 10*time.Second); addrOf(v, "shard-a") != sh.Primary.Addr {
		t.Fatalf("over TLS: %+v, want shard-a at %s", v.Nodes, sh.Primary.Addr)
	}
	if st := w.Status(); st.Stale() {
		t.Fatalf("over TLS: %v", st)
	}
	time.Sleep(200 * time.Millisecond) // the subscriptions, opened beside the first asking, are up
	start := time.Now()
	sh.Primary.Kill()
	v := next(t, w, 30*time.Second)
	t.Logf("over TLS: primary killed, the version with its replica after %v (down-after %v, interval a minute)",
		time.Since(start).Round(time.Millisecond), c.DownAfter)
	if addrOf(v, "shard-a") != sh.Replica.Addr {
		t.Fatalf("after the kill %+v; want shard-a at %s", v.Nodes, sh.Replica.Addr)
	}
}
