package proxy

import (
	"errors"
	"fmt"
	"testing"

	"github.com/bradfitz/gomemcache/memcache"
)

// TestGoClientThroughProxy drives the proxy with a widely used Go client
// (bradfitz/gomemcache): set, get, multi-get, add, cas, incr, touch, delete.
func TestGoClientThroughProxy(t *testing.T) {
	t.Parallel()
	ms := []*memcached{startMemcached(t, 0), startMemcached(t, 0), startMemcached(t, 0)}
	s := startProxy(t, poolYAML("  hash: md5\n", ms...))
	c := memcache.New(s.Addr("p").String())
	var keys []string
	for i := range 100 {
		k := fmt.Sprint("go:", i)
		keys = append(keys, k)
		if err := c.Set(&memcache.Item{Key: k, Value: []byte(k), Flags: uint32(i)}); err != nil {
			t.Fatal(err)
		}
	}
	items, err := c.GetMulti(append(keys, "go:absent"))
	if err != nil || len(items) != len(keys) {
		t.Fatalf("GetMulti: %d items, %v", len(items), err)
	}
	for i, k := range keys {
		if it := items[k]; it == nil || string(it.Value) != k || it.Flags != uint32(i) {
			t.Fatalf("GetMulti %s: %+v", k, it)
		}
	}
	if err := c.Add(&memcache.Item{Key: "go:1", Value: []byte("x")}); !errors.Is(err, memcache.ErrNotStored) {
		t.Fatalf("Add existing: %v", err)
	}
	it, err := c.Get("go:2")
	if err != nil {
		t.Fatal(err)
	}
	it.Value = []byte("new")
	if err := c.CompareAndSwap(it); err != nil {
		t.Fatalf("CAS: %v", err)
	}
	if err := c.CompareAndSwap(it); !errors.Is(err, memcache.ErrCASConflict) {
		t.Fatalf("second CAS: %v", err)
	}
	if err := c.Set(&memcache.Item{Key: "go:n", Value: []byte("41")}); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Increment("go:n", 1); err != nil || n != 42 {
		t.Fatalf("Increment: %d %v", n, err)
	}
	if err := c.Touch("go:n", 100); err != nil {
		t.Fatalf("Touch: %v", err)
	}
	if err := c.Delete("go:n"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := c.Get("go:n"); !errors.Is(err, memcache.ErrCacheMiss) {
		t.Fatalf("Get deleted: %v", err)
	}
	if err := c.Ping(); err != nil {
		t.Fatalf("Ping: %v", err)
	}
}
