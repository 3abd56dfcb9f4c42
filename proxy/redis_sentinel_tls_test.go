package proxy

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/membership/sentinel/sentineltest"
)

// TestSentinelOverTLS: a pool whose Sentinels speak TLS and ask for a
// client certificate (tls-auth-clients) follows them with tls set: its
// source reads the primaries and is told of a failover over TLS (asked
// only every minute, so only the announcement brings it at once), and
// replica reads find the shard's replica by asking them over TLS too.
func TestSentinelOverTLS(t *testing.T) {
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
