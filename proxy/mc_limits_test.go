package proxy

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// TestMigrationLimits: at its defaults the proxy serves what nutcracker
// over memcached -I 4m serves: values over 1 MiB, written through it or
// found on the servers, and a get of 10,000 keys.
func TestMigrationLimits(t *testing.T) {
	t.Parallel()
	ms := []*memcached{startMemcached(t, 0, "-I", "4m"), startMemcached(t, 0, "-I", "4m")}
	s := startProxy(t, poolYAML("", ms...))
	c := dial(t, s.Addr("p").String())
	big := make([]byte, 3<<20+17)
	for i := range big {
		big[i] = byte(rand.Uint32())
	}
	t.Run("value written through the proxy", func(t *testing.T) {
		if got := c.do(fmt.Sprintf("set big 7 0 %d\r\n%s\r\n", len(big), big)); got != "STORED\r\n" {
			t.Fatalf("set of %d bytes: %q", len(big), got)
		}
		owner := ownerOf(s.testPool("p"), "big")
		want := fmt.Sprintf("VALUE big 7 %d\r\n%s\r\nEND\r\n", len(big), big)
		if got := dial(t, owner).do("get big\r\n"); got != want {
			t.Fatalf("the owner %s holds %d bytes, not the value", owner, len(got))
		}
		if got := c.do("get big\r\n"); got != want {
			t.Fatalf("get through the proxy: %d bytes, not the value", len(got))
		}
	})
	t.Run("value found on a server", func(t *testing.T) {
		owner := ownerOf(s.testPool("p"), "old")
		if got := dial(t, owner).do(fmt.Sprintf("set old 1 0 %d\r\n%s\r\n", len(big), big)); got != "STORED\r\n" {
			t.Fatalf("set on %s: %q", owner, got)
		}
		want := fmt.Sprintf("VALUE old 1 %d\r\n%s\r\nEND\r\n", len(big), big)
		if got := c.do("get old\r\n"); got != want {
			t.Fatalf("get through the proxy: %d bytes, not the value", len(got))
		}
	})
	t.Run("get of 10000 keys", func(t *testing.T) {
		var sets strings.Builder
		keys := make([]string, 10000)
		for i := range keys {
			keys[i] = fmt.Sprint("many:", i)
			if i%2 == 0 {
				fmt.Fprintf(&sets, "set %s 0 0 %d noreply\r\n%s\r\n", keys[i], len(keys[i]), keys[i])
			}
		}
		c.send(sets.String())
		var want strings.Builder
		for i := 0; i < len(keys); i += 2 {
			fmt.Fprintf(&want, "VALUE %s 0 %d\r\n%s\r\n", keys[i], len(keys[i]), keys[i])
		}
		want.WriteString("END\r\n")
		if got := c.do("get " + strings.Join(keys, " ") + "\r\n"); got != want.String() {
			t.Fatalf("get of %d keys: %d bytes, want %d", len(keys), len(got), want.Len())
		}
	})
	eventually(t, "the buffers released", func() bool { return s.budget.inUse() == 0 })
}

// TestSharedAddress: one address under two names (a dead host's name
// repointed at a spare that serves under another) is served, each key on
// the server nutcracker puts it on.
func TestSharedAddress(t *testing.T) {
	t.Parallel()
	needBinary(t, "nutcracker")
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0)}
	servers := fmt.Sprintf("  servers:\n   - %s:1 main\n   - %s:1 other\n   - %s:1 spare\n", ms[0].addr, ms[1].addr, ms[0].addr)
	ncListen := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startNutcracker(t, "p:\n  listen: "+ncListen+"\n"+servers, ncListen)
	s := startProxy(t, "p:\n  listen: 127.0.0.1:0\n  timeout: 10000\n"+servers)
	keys := diffKeys(300)
	var sets []string
	for _, k := range keys {
		sets = append(sets, fmt.Sprintf("set %s 0 0 1\r\nx\r\n", k))
	}
	flushAll(t, ms)
	runStream(t, ncListen, sets)
	ncAt := holders(t, ms, keys)
	flushAll(t, ms)
	runStream(t, s.Addr("p").String(), sets)
	kAt := holders(t, ms, keys)
	names := map[string]int{}
	pl := s.testPool("p").place.Load()
	for i, k := range keys {
		if ncAt[i] != kAt[i] || kAt[i] < 0 {
			t.Fatalf("key %q: nutcracker put it on %d, kolco on %d", k, ncAt[i], kAt[i])
		}
		var sc routeScratch
		names[pl.route([]byte(k), false, &sc)[0].name()]++
	}
	if len(names) != 3 {
		t.Fatalf("keys reached names %v, want all three", names)
	}
}

// TestBufferLimits: a value larger than kolco.buffer_limit is refused as
// memcached refuses one it has no memory for, and a reply's value that does
// not fit fails its request; either way the connection stays in step and
// nothing stays held.
func TestBufferLimits(t *testing.T) {
	m := startMemcached(t, 0, "-I", "4m")
	s := startProxy(t, poolYAML("", m)+"kolco:\n  buffer_limit: 1048576\n")
	c := dial(t, s.Addr("p").String())
	big := bytes.Repeat([]byte("b"), 2<<20)
	if got := c.do(fmt.Sprintf("set big 0 0 %d\r\n%s\r\n", len(big), big)); got != "SERVER_ERROR out of memory storing object\r\n" {
		t.Fatalf("set over the limit: %q", got)
	}
	if got := dial(t, m.addr).do(fmt.Sprintf("set big 0 0 %d\r\n%s\r\n", len(big), big)); got != "STORED\r\n" {
		t.Fatalf("set on the server: %q", got)
	}
	want := fmt.Sprintf("SERVER_ERROR a value of %d bytes: kolco.buffer_limit is full\r\n", len(big))
	if got := c.do("get big\r\n"); got != want {
		t.Fatalf("get over the limit: %q, want %q", got, want)
	}
	if got := c.do("set small 0 0 1\r\nx\r\n"); got != "STORED\r\n" {
		t.Fatalf("set after: %q", got)
	}
	eventually(t, "the buffers released", func() bool { return s.budget.inUse() == 0 })
}

// TestClientBufferLimitHoldsReaderBack: a client pipelining more than its
// client_buffer_limit is read no further until its requests are answered;
// every request is served, and the proxy never holds more than the limit
// for it.
func TestClientBufferLimitHoldsReaderBack(t *testing.T) {
	t.Parallel()
	m := startMemcached(t, 0)
	const limit, size, n = 256 << 10, 100 << 10, 40
	s := startProxy(t, poolYAML(fmt.Sprintf("  client_buffer_limit: %d\n", limit), m))
	c := dial(t, s.Addr("p").String())
	val := strings.Repeat("v", size)
	go func() {
		for i := range n {
			if _, err := fmt.Fprintf(c.conn, "set k%d 0 0 %d\r\n%s\r\n", i, size, val); err != nil {
				return
			}
		}
	}()
	for i := range n {
		if got := c.reply(memcache.CmdSet); got != "STORED\r\n" {
			t.Fatalf("set %d: %q", i, got)
		}
	}
	if p := s.budget.peak(); p > limit {
		t.Errorf("the proxy held %d bytes for a client with client_buffer_limit %d", p, limit)
	}
	eventually(t, "the buffers released", func() bool { return s.budget.inUse() == 0 })
}
