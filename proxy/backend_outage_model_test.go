package proxy

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestOutagesMatchModel drives a pool under rehash over five real servers
// through random sequences of writes, reads, servers marked down and
// servers restored (each return settled as the health loop settles it),
// any number out at once, and checks every read against a model of the
// cache: a read gives the last value acknowledged, or a value whose write
// failed (in doubt), or a miss - never an older one. The servers stay up
// throughout, as a stalled server that answers again before it is
// restored does, so a copy left where it should not be is read at once.
// For memcached and Redis, ketama and kolco distributions, and two copies
// of each key (memcached); a failure names the seed and the steps of the
// key and the changes of health before it.
//
// KOLCO_OUTAGE_SEEDS=N runs N seeds of each (3 by default), and
// KOLCO_OUTAGE_SEED=S the seed S alone.
func TestOutagesMatchModel(t *testing.T) {
	t.Parallel()
	first, last := uint64(1), uint64(3)
	if n, err := strconv.ParseUint(os.Getenv("KOLCO_OUTAGE_SEEDS"), 10, 64); err == nil && n > 0 {
		last = n
	}
	if s, err := strconv.ParseUint(os.Getenv("KOLCO_OUTAGE_SEED"), 10, 64); err == nil {
		first, last = s, s
	}
	for _, proto := range []string{"memcached", "redis"} {
		for _, dist := range []string{"ketama", "ring", "jump", "maglev", "ring, 2 copies"} {
			if proto == "redis" && strings.Contains(dist, "copies") {
				continue // a Redis pool keeps one copy of each key
			}
			for seed := first; seed <= last; seed++ {
				t.Run(fmt.Sprintf("%s/%s/seed=%d", proto, dist, seed), func(t *testing.T) {
					t.Parallel()
					runOutageModel(t, proto, dist, seed, 1500)
				})
			}
		}
	}
}

func runOutageModel(t *testing.T, proto, dist string, seed uint64, steps int) {
	d := startModelPool(t, proto, dist)
	rng := rand.New(rand.NewPCG(seed, 7))
	keys := spreadKeys("model", 40)
	acked := make([]int, len(keys)) // the last version acknowledged
	failed := make([]map[int]bool, len(keys))
	next := make([]int, len(keys))
	// The steps of each key, and the changes of health, for the log of a
	// failure.
	var log []string
	var keyOf []int // the key of each line of log, -1 for health
	note := func(key int, format string, args ...any) {
		log, keyOf = append(log, fmt.Sprintf(format, args...)), append(keyOf, key)
	}
	fail := func(i int, format string, args ...any) {
		var lines []string
		for j, l := range log {
			if keyOf[j] == i || keyOf[j] < 0 {
				lines = append(lines, l)
			}
		}
		if len(lines) > 60 {
			lines = lines[len(lines)-60:]
		}
		t.Fatalf("seed %d: %s\n%s's owner %s; its steps and the changes of health before:\n%s", seed, fmt.Sprintf(format, args...),
			keys[i], configuredOwnerOf(d.p, keys[i]), strings.Join(lines, "\n"))
	}
	for step := range steps {
		i := rng.IntN(len(keys))
		switch r := rng.IntN(100); {
		case r < 45:
			next[i]++
			v := next[i]
			if err := d.client.set(keys[i], strconv.Itoa(v)); err != nil {
				if failed[i] == nil {
					failed[i] = map[int]bool{}
				}
				failed[i][v] = true
				note(i, "%d: set %s %d failed: %v", step, keys[i], v, err)
				d.redial()
				continue
			}
			acked[i] = v
			note(i, "%d: set %s %d (routed to %s)", step, keys[i], v, ownerOf(d.p, keys[i]))
		case r < 90:
			val, found, err := d.client.get(keys[i])
			if err != nil {
				note(i, "%d: get %s failed: %v", step, keys[i], err)
				d.redial()
				continue
			}
			if !found {
				note(i, "%d: get %s: miss", step, keys[i])
				continue
			}
			v, _ := strconv.Atoi(val)
			note(i, "%d: get %s: %d (routed to %s)", step, keys[i], v, ownerOf(d.p, keys[i]))
			if v != acked[i] && !failed[i][v] {
				fail(i, "%s read %d, the last acknowledged %d; the servers hold%s", keys[i], v, acked[i], d.held(keys[i]))
			}
		case r < 95:
			b := d.p.backends[rng.IntN(len(d.p.backends))]
			if b.health.isDown() || d.up() == 1 {
				continue
			}
			b.fail(ErrConnLost, 1)
			note(-1, "%d: %s marked down", step, b.addr)
		default:
			b := d.p.backends[rng.IntN(len(d.p.backends))]
			if !b.health.isDown() {
				continue
			}
			d.p.checks.restore(b)
			note(-1, "%d: %s restored: down %v", step, b.addr, b.health.isDown())
		}
	}
}

func startModelPool(t *testing.T, proto, dist string) *doublePool {
	if d, ok := strings.CutSuffix(dist, ", 2 copies"); ok {
		dist = d + "\n  replicas: 2"
	}
	settings := "  distribution: " + dist + "\n  auto_eject_hosts: true\n  server_failure_limit: 1\n" +
		"  timeout: 2000\n  server_retry_timeout: 3600000\n"
	if dist == "ketama" {
		settings += "  hash: fnv1a_64\n"
	}
	d := &doublePool{t: t, proto: proto}
	var y string
	if proto == "redis" {
		var rs []*redisServer
		for range 5 {
			r := startRedis(t, 0)
			rs = append(rs, r)
			d.servers = append(d.servers, r.addr)
		}
		y = redisPoolYAML(settings, rs...)
	} else {
		var ms []*memcached
		for range 5 {
			m := startMemcached(t, 0)
			ms = append(ms, m)
			d.servers = append(d.servers, m.addr)
		}
		y = poolYAML(settings, ms...)
	}
	d.s = startProxy(t, y)
	d.p = d.s.testPool("p")
	d.redial()
	return d
}

// redial replaces the client's connection, after a failure.
func (d *doublePool) redial() {
	if d.client != nil {
		d.client.close()
	}
	c, err := dialKV(d.proto, d.s.Addr("p").String())
	if err != nil {
		d.t.Fatal(err)
	}
	d.client = c
	d.t.Cleanup(c.close)
}

// up counts the servers not marked down.
func (d *doublePool) up() int {
	n := 0
	for _, b := range d.p.backends {
		if !b.health.isDown() {
			n++
		}
	}
	return n
}

// held says what each server holds of key.
func (d *doublePool) held(key string) string {
	var b strings.Builder
	for _, addr := range d.servers {
		c, err := dialKV(d.proto, addr)
		if err != nil {
			d.t.Fatal(err)
		}
		v, found, err := c.get(key)
		c.close()
		fmt.Fprintf(&b, " %s: %q %v %v;", addr, v, found, err)
	}
	return b.String()
}
