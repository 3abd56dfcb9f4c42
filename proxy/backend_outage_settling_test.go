package proxy

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/internal/faults"
)

// TestReturnSettledAcrossAChange: a Redis cache under rehash whose server
// A is out, its keys written to stand-ins, comes back while the link to
// a stand-in X is stalled: the running pool's return takes A's keys from
// its journal and waits on X for their values. A change (a server added,
// through a membership source as in the fault schedule) prepares the pool
// that replaces it, which shares A's journal and probes A too. It must not
// take the journal's emptiness for nothing missed: the first return still
// holds the keys, and fails on X. Before, the second return restored A at
// once with nothing settled, and A served the values of before its
// outage for every key written to X meanwhile (found by the fault
// schedule's seed 225: binomial, r0 out as the link to its stand-in r2
// stalled and r4 was added, four reads of r0's keys at their values of
// before the outage, the log saying "server settled and restored ...
// keys=0").
func TestReturnSettledAcrossAChange(t *testing.T) {
	t.Parallel()
	d, relays, yaml := binomialOverRelays(t)
	a, aKeys := d.mostOwned(testKeys("across", 400))
	d.setAll(aKeys, "v1") // on A
	a.fail(ErrConnLost, 1)
	if !a.health.isDown() {
		t.Fatal("A not marked down")
	}
	d.setAll(aKeys, "v2") // on A's stand-ins, noted in its outage
	x, xKeys := d.mostOwned(aKeys)
	var xRelay *faults.Relay
	for _, rl := range relays {
		if rl.Addr == x.addr {
			xRelay = rl
		}
	}
	o := a.outage.Load()
	old := d.p
	xRelay.Stall()
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		old.checks.restore(a) // waits on X's stalled link for its keys' values
	}()
	eventually(t, "the running pool's return taking A's keys from its journal", func() bool { return o.size() == 0 })

	after, err := ParseConfig([]byte(yaml(5)))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.s.Reload(context.Background(), after); err != nil {
		t.Fatal(err)
	}
	d.p = d.s.testPool("p")
	if d.p == old {
		t.Fatal("the change kept the pool")
	}
	na := backendAt(d.p.backends, a.addr)
	// The new pool's probe finds A answering while the first return
	// still waits on X; that return fails once the link is cut.
	d.p.checks.restore(na)
	select {
	case <-returned:
		t.Fatal("the running pool's return ended before the link to X was cut")
	default:
	}
	xRelay.Cut()
	<-returned
	xRelay.Heal()
	if na.health.isDown() {
		d.p.checks.restore(na) // the next probe
	}
	if na.health.isDown() {
		t.Fatal("A not restored")
	}
	var kept []string // A's keys A serves after the change
	for _, k := range xKeys {
		if ownerOf(d.p, k) == a.addr {
			kept = append(kept, k)
		}
	}
	if len(kept) < 10 {
		t.Fatalf("%d of the %d keys of A written to X are A's after the change: too few to check", len(kept), len(xKeys))
	}
	if n, ex := d.older(kept, "v2"); n > 0 {
		t.Errorf("A back: %d of %d keys written to X while it was out read an older value (%s)", n, len(kept), ex)
	}
}

// binomialOverRelays starts a Redis cache of binomial over four of five
// redis-servers, each behind a relay, ejecting a server at its first
// failure and trying it again only when a test says so; yaml gives the
// configuration over the first n.
func binomialOverRelays(t *testing.T) (d *doublePool, relays []*faults.Relay, yaml func(n int) string) {
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
	relays = relaysTo(t, rs)
	yaml = func(n int) string {
		var b strings.Builder
		// timeout: a stalled read waits until the test cuts the link.
		b.WriteString("p:\n  listen: 127.0.0.1:0\n  redis: true\n  distribution: binomial\n  auto_eject_hosts: true\n" +
			"  server_failure_limit: 1\n  timeout: 60000\n  server_retry_timeout: 3600000\n  servers:\n")
		for i := range n {
			fmt.Fprintf(&b, "   - %s:1 r%d\n", relays[i].Addr, i)
		}
		return b.String()
	}
	d = &doublePool{t: t, proto: "redis", s: startProxy(t, yaml(4))}
	d.p = d.s.testPool("p")
	d.redial()
	return d, relays, yaml
}

// TestOutageKeysTakenAcrossAChangeComeBackUnsure: keys a return took from
// the journal when a change of the placement came, and put back as the
// return failed, were noted under the placement before the change, as
// every key the change marked unsure: they come back unsure too, so that
// the next return removes them rather than copy a stand-in's copy of the
// old placement. Before, they came back as noted, the change unseen.
func TestOutageKeysTakenAcrossAChangeComeBackUnsure(t *testing.T) {
	const standIn = "127.0.0.1:1"
	o := newOutage(10)
	o.note([]byte("k"), standIn)
	settled := map[string][]string{}
	taken := o.nextKeys(settleBatch, settled)
	o.placementChanged()
	o.putBack(taken, settled)
	if !o.fence([]byte("k"), standIn) {
		t.Errorf("a key noted before the change and put back after it is vouched for at its stand-in")
	}
}
