package proxy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/internal/faults"
)

// TestReplicasCopyThatMissedAWriteIsNotRead: with two copies, a write
// that one copy takes and the other fails is acknowledged; the copy that
// failed it holds the value of before, and under server_failure_limit 2
// one failure does not mark it down. A read of the key at that copy then
// returned the value of before, older than one acknowledged - a fault
// schedule's seeds 115 and 143 (memcached, two copies, rehash) read 1 and
// 3 such values. The copy is marked down as it misses the write, so that
// reads go to the copy that took it, and its return settles the key from
// there: every read returns the new value, and so does the copy itself
// once it is back.
func TestReplicasCopyThatMissedAWriteIsNotRead(t *testing.T) {
	t.Parallel()
	for name, ejection := range map[string]string{"rehash": "auto_eject_hosts: true", "fail-fast": "ejection: fail-fast"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0)}
			relays := make([]*faults.Relay, len(ms))
			var b strings.Builder
			fmt.Fprintf(&b, "p:\n  listen: 127.0.0.1:0\n  distribution: ring\n  replicas: 2\n  zone: a\n  zones: {m0: a, m1: a, m2: b, m3: b}\n"+
				"  %s\n  timeout: 10000\n  server_failure_limit: 2\n  health_check: {interval: 50, timeout: 1000}\n  servers:\n", ejection)
			for i, m := range ms {
				rl, err := faults.NewRelay(m.addr)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(rl.Close)
				relays[i] = rl
				fmt.Fprintf(&b, "   - %s:1 m%d\n", rl.Addr, i)
			}
			s := startProxy(t, b.String())
			c := dial(t, s.Addr("p").String())
			key := ""
			for _, k := range diffKeys(100) {
				if wantCopies(t, k)[0] == 0 { // read from m0, in the proxy's zone
					key = k
					break
				}
			}
			if key == "" {
				t.Fatal("no key of the first 100 is read from m0")
			}
			setValue(c, key, "old", 0, 0)
			relays[0].Cut() // m0's connections reset: it fails the write, its other copy takes it
			if got := c.do("set " + key + " 0 0 3\r\nnew\r\n"); got != "STORED\r\n" {
				t.Fatalf("set %q with m0 cut off: %q, want STORED from its other copy", key, got)
			}
			if got := c.do("get " + key + "\r\n"); strings.Contains(got, "\r\nold\r\n") {
				t.Errorf("get %q with m0 cut off, after its set was acknowledged: %q, older than new", key, got)
			}
			relays[0].Heal()
			var m0 *backend
			for _, b := range s.testPool("p").backends {
				if b.addr == relays[0].Addr {
					m0 = b
				}
			}
			eventually(t, "m0 up and answering", func() bool {
				return !m0.health.isDown() && m0.health.observedNow().failing == 0
			})
			if got := getValue(c, key); got != "new" {
				t.Errorf("get %q once m0 is back: %q, want new", key, got)
			}
			if got, _ := dialDirect(t, ms[0]).get(key); got.value != "new" {
				t.Errorf("m0 holds %q for %q once back, want new (settled from its other copy)", got.value, key)
			}
		})
	}
}
