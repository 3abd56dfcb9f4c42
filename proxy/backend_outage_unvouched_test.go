package proxy

import (
	"context"
	"slices"
	"testing"
)

// modulaServerOf returns the name of the server of key under p's distribution
// over p's servers but those named out: where a twemproxy pool sends key
// while they are out.
func modulaServerOf(t *testing.T, p *pool, key string, out ...string) string {
	t.Helper()
	var up []*backend
	for _, b := range p.backends {
		if !slices.Contains(out, b.name()) {
			up = append(up, b)
		}
	}
	pick, err := newPicker(p.cfg, nodesOf(up))
	if err != nil {
		t.Fatal(err)
	}
	return up[pick.Index([]byte(key))].name()
}

// TestModulaReturnCopiesNoUnvouchedValue: a Redis cache under rehash and
// modula over r0..r3, the order of the fault schedule's seed 2770. The
// keys are r0's with every server up, r3's with r1 out, r0's with r1 and
// r3 out, and r2's with r3 alone out. Set with every server up (to r0),
// then while r1 is out (to r3, noted in r1's outage); r3 goes out, and r1
// returns while it is: its return sends the keys to r2, and the pool read
// them from r0 then, which no write of the outage reached. Before, the
// return copied r0's value of before the outage onto r2, r2 served it,
// and r3's return copied it back onto r0 (the seed read it 1 s after
// both returns, older than the value acknowledged on r3). Now each read
// misses or gives the value written while r1 was out.
func TestModulaReturnCopiesNoUnvouchedValue(t *testing.T) {
	t.Parallel()
	d := startDoublePool(t, "redis", "modula")
	r := d.p.backends // r0..r3, in the configuration's order
	var keys []string
	for _, k := range spreadKeys("unvouched", 400) {
		if modulaServerOf(t, d.p, k) == "r0" && modulaServerOf(t, d.p, k, "r1") == "r3" && modulaServerOf(t, d.p, k, "r1", "r3") == "r0" &&
			modulaServerOf(t, d.p, k, "r3") == "r2" {
			keys = append(keys, k)
		}
	}
	if len(keys) < 5 {
		t.Fatalf("only %d keys of 400 placed as the case needs", len(keys))
	}
	d.setAll(keys, "before")
	if r[1].fail(ErrConnLost, 1); !r[1].health.isDown() {
		t.Fatal("r1 not marked down")
	}
	d.setAll(keys, "outage") // to r3
	if r[3].fail(ErrConnLost, 1); !r[3].health.isDown() {
		t.Fatal("r3 not marked down")
	}
	d.restoreUp(r[1], "r1")
	if n, ex := d.older(keys, "outage"); n > 0 {
		t.Errorf("%d of %d keys read a value older than one acknowledged while r1 was out, once r1 is back and r3 out (%s)", n, len(keys), ex)
	}
	d.restoreUp(r[3], "r3")
	if n, ex := d.older(keys, "outage"); n > 0 {
		t.Errorf("%d of %d keys read a value older than one acknowledged while r1 was out, once r1 and r3 are back (%s)", n, len(keys), ex)
	}
	d.setAll(keys, "after")
	if n, ex := d.older(keys, "after"); n > 0 {
		t.Errorf("%d of %d keys set once both are back read another value (%s)", n, len(keys), ex)
	}
}

// TestModulaChangeWhileOutReadsNoCopyOfBefore: a Redis cache under rehash
// and modula over r0..r3, r4 added while r2 is out, the order of the fault
// schedule's seed 2770 (its second group of stale reads). The keys are
// r0's with every server up, r3's with r2 out, and r0's again once r4 is
// added, r2 out or not. Set with every server up (to r0), then while r2 is
// out (to r3, noted in r2's outage); the change sends them back to r0,
// whose copy is from before the outage. Before, reads at r0 gave that
// copy while r2 was out (a read there was fenced only for a key r2's
// return would move away from r0), and r2's return left it there (it
// settled only a key it moved elsewhere): the seed read it 0.5 s after
// the return, older than a value acknowledged on r3. Now the first half
// of the keys, read while r2 is out, and the second, read once it is
// back, miss or give the value written while r2 was out.
func TestModulaChangeWhileOutReadsNoCopyOfBefore(t *testing.T) {
	t.Parallel()
	settings := "  distribution: modula\n  hash: fnv1a_64\n  auto_eject_hosts: true\n  server_failure_limit: 1\n  timeout: 2000\n" +
		"  server_retry_timeout: 3600000\n"
	d, after := startFourOfFive(t, settings)
	five, err := testPool(after.WithDefaults().Pools["p"])
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, k := range spreadKeys("before", 1200) {
		if modulaServerOf(t, d.p, k) == "r0" && modulaServerOf(t, d.p, k, "r2") == "r3" && modulaServerOf(t, five, k, "r2") == "r0" &&
			modulaServerOf(t, five, k) == "r0" {
			keys = append(keys, k)
		}
	}
	if len(keys) < 10 {
		t.Fatalf("only %d keys of 1200 placed as the case needs", len(keys))
	}
	d.setAll(keys, "before")
	r2 := d.p.backends[2]
	if r2.fail(ErrConnLost, 1); !r2.health.isDown() {
		t.Fatal("r2 not marked down")
	}
	d.setAll(keys, "outage") // to r3
	if err := d.s.Reload(context.Background(), after); err != nil {
		t.Fatal(err)
	}
	d.p = d.s.testPool("p")
	if r2 = backendAt(d.p.backends, d.servers[2]); !r2.health.isDown() {
		t.Fatal("r2 not down after the change")
	}
	early, late := keys[:len(keys)/2], keys[len(keys)/2:]
	if n, ex := d.older(early, "outage"); n > 0 {
		t.Errorf("r4 added, r2 out: %d of %d keys read a value older than one acknowledged while r2 was out (%s)", n, len(early), ex)
	}
	d.restoreUp(r2, "r2")
	if n, ex := d.older(late, "outage"); n > 0 {
		t.Errorf("r2 back after r4 was added: %d of %d keys read a value older than one acknowledged while r2 was out (%s)", n, len(late), ex)
	}
	d.setAll(keys, "after")
	if n, ex := d.older(keys, "after"); n > 0 {
		t.Errorf("%d of %d keys set once r2 is back read another value (%s)", n, len(keys), ex)
	}
}

// TestModulaTwoOutReadsNoCopyOfBeforeTheChange: a Redis cache under rehash
// and modula, r4 added to r0..r3, the order of the fault schedule's seed
// 4024 (its last group of stale reads). The keys are r0's over r0..r3,
// r3's once r4 is added, and r0's with r3 out, r1 out beside it or not.
// Set before the change (to r0), and after it (to r3): r0 keeps its copy
// of before (a Redis pool's change is cold). r3 goes out, and r1 beside
// it; neither's return alone sends the keys away from r0, the other still
// out. Before, a read at r0 was fenced only for a key one return moves
// away, and gave r0's copy of before the change (the seed read it 0.2 s
// after r3 was cut, older than the value acknowledged on r3 just before);
// and a write at r0 while both were out was noted in neither's outage, so
// that once both were back r3 served its value from before its outage.
// Now each read misses or gives the value written last.
func TestModulaTwoOutReadsNoCopyOfBeforeTheChange(t *testing.T) {
	t.Parallel()
	settings := "  distribution: modula\n  hash: fnv1a_64\n  auto_eject_hosts: true\n  server_failure_limit: 1\n  timeout: 2000\n" +
		"  server_retry_timeout: 3600000\n"
	d, after := startFourOfFive(t, settings)
	five, err := testPool(after.WithDefaults().Pools["p"])
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, k := range spreadKeys("twoout", 1200) {
		if modulaServerOf(t, d.p, k) == "r0" && modulaServerOf(t, five, k) == "r3" && modulaServerOf(t, five, k, "r3") == "r0" &&
			modulaServerOf(t, five, k, "r1", "r3") == "r0" {
			keys = append(keys, k)
		}
	}
	if len(keys) < 10 {
		t.Fatalf("only %d keys of 1200 placed as the case needs", len(keys))
	}
	d.setAll(keys, "before") // to r0
	if err := d.s.Reload(context.Background(), after); err != nil {
		t.Fatal(err)
	}
	d.p = d.s.testPool("p")
	d.setAll(keys, "change") // to r3
	r1, r3 := backendAt(d.p.backends, d.servers[1]), backendAt(d.p.backends, d.servers[3])
	for _, b := range []*backend{r3, r1} {
		if b.fail(ErrConnLost, 1); !b.health.isDown() {
			t.Fatalf("%s not marked down", b.addr)
		}
	}
	if n, ex := d.older(keys, "change"); n > 0 {
		t.Errorf("r3 and r1 out: %d of %d keys read a value older than one acknowledged on r3 (%s)", n, len(keys), ex)
	}
	d.setAll(keys, "outage") // to r0
	d.restoreUp(r3, "r3")
	if n, ex := d.older(keys, "outage"); n > 0 {
		t.Errorf("r3 back, r1 out: %d of %d keys read another value than the one written while both were out (%s)", n, len(keys), ex)
	}
	d.restoreUp(r1, "r1")
	if n, ex := d.older(keys, "outage"); n > 0 {
		t.Errorf("r3 and r1 back: %d of %d keys read another value than the one written while both were out (%s)", n, len(keys), ex)
	}
}
