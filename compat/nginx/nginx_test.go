package nginx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/bytestr"
)

var sink int

// refPoints is a deliberately plain reading of nginx's
// ngx_http_upstream_init_chash: every server's points in configuration
// order, stably sorted by value, and of equal values only the first kept.
type refPoint struct {
	h     uint32
	owner int
}

func refPoints(servers []Server) []refPoint {
	var all []refPoint
	for i, s := range servers {
		host, port := s.Addr, ""
		// nginx compares the "unix:" prefix without case (ngx_strncasecmp).
		unix := len(s.Addr) >= 5 && strings.ToLower(s.Addr[:5]) == "unix:"
		if k := strings.LastIndexByte(s.Addr, ':'); k >= 0 && strings.Trim(s.Addr[k+1:], "0123456789") == "" && !unix {
			host, port = s.Addr[:k], s.Addr[k+1:]
		}
		if unix {
			host = s.Addr[5:]
		}
		prev := uint32(0)
		for range 160 * s.weight() {
			b := []byte(host + "\x00" + port)
			b = binary.LittleEndian.AppendUint32(b, prev)
			prev = crc32.ChecksumIEEE(b)
			all = append(all, refPoint{prev, i})
		}
	}
	sort.SliceStable(all, func(a, b int) bool { return all[a].h < all[b].h })
	var kept []refPoint
	for _, p := range all {
		if len(kept) == 0 || kept[len(kept)-1].h != p.h {
			kept = append(kept, p)
		}
	}
	return kept
}

// refConsistent scans the points for the first one >= crc32(key) whose
// server is not down, wrapping around.
func refConsistent(pts []refPoint, servers []Server, key []byte) int {
	kh := crc32.ChecksumIEEE(key)
	for _, p := range pts {
		if p.h >= kh && !servers[p.owner].Down {
			return p.owner
		}
	}
	for _, p := range pts { // wrap past the last point
		if !servers[p.owner].Down {
			return p.owner
		}
	}
	for i, s := range servers { // nginx: round robin; here the first server up
		if !s.Down {
			return i
		}
	}
	return -1
}

// refHash is plain `hash $key;` written out: up to 21 hashes, the n-th of
// decimal(n) + key for n > 0, accumulated, each walked over the servers in
// order, until one lands on a server that is up.
func refHash(servers []Server, key []byte) int {
	total := 0
	for _, s := range servers {
		total += s.weight()
	}
	sum := uint32(0)
	for n := 0; n <= 20; n++ {
		prefix := ""
		if n > 0 {
			prefix = fmt.Sprint(n)
		}
		sum += (crc32.ChecksumIEEE(append([]byte(prefix), key...)) >> 16) & 0x7fff
		w := int(sum % uint32(total))
		for i, s := range servers {
			if w < s.weight() {
				if !s.Down {
					return i
				}
				break
			}
			w -= s.weight()
		}
	}
	for i, s := range servers {
		if !s.Down {
			return i
		}
	}
	return -1
}

func testServers() [][]Server {
	return [][]Server{
		{{Addr: "127.0.0.1:19002"}},
		{{Addr: "127.0.0.1:19002", Weight: 3}, {Addr: "127.0.0.1:19003"}, {Addr: "10.0.0.7"}},
		{{Addr: "unix:/run/a.sock", Weight: 2}, {Addr: "cache-1.example.com:11211"}, {Addr: "[::1]:80", Weight: 5}, {Addr: "h:x1"}},
		{{Addr: "a:1", Weight: 3, Down: true}, {Addr: "b:2"}, {Addr: "c:3", Weight: 2}, {Addr: "d:4", Down: true}},
		{{Addr: "a:1", Weight: 20, Down: true}, {Addr: "b:2"}},
	}
}

func randomKeys(n int, seed uint64) [][]byte {
	r := rand.New(rand.NewPCG(seed, 1))
	keys := make([][]byte, n)
	for i := range keys {
		k := make([]byte, 1+r.IntN(40))
		for j := range k {
			k[j] = byte(r.UintN(256))
		}
		keys[i] = k
	}
	return keys
}

func TestMatchesReference(t *testing.T) {
	keys := randomKeys(2000, 7)
	for _, servers := range testServers() {
		c, err := NewConsistent(servers)
		if err != nil {
			t.Fatal(err)
		}
		h, err := NewModulo(servers)
		if err != nil {
			t.Fatal(err)
		}
		pts := refPoints(servers)
		for _, k := range keys {
			if got, want := c.Index(k), refConsistent(pts, servers, k); got != want {
				t.Fatalf("%v: consistent Index(%q) = %d, want %d", servers, k, got, want)
			}
			if got, want := h.Index(k), refHash(servers, k); got != want {
				t.Fatalf("%v: hash Index(%q) = %d, want %d", servers, k, got, want)
			}
		}
	}
}

func TestSplitHostPort(t *testing.T) {
	for _, c := range []struct{ in, host, port string }{
		{"127.0.0.1:19002", "127.0.0.1", "19002"},
		{"10.0.0.7", "10.0.0.7", ""},
		{"unix:/tmp/a:80", "/tmp/a:80", ""},
		{"UNIX:/x", "/x", ""},
		{"[::1]:80", "[::1]", "80"},
		{"host:", "host", ""},
		{"h:8a", "h:8a", ""},
	} {
		t.Run(c.in, func(t *testing.T) {
			if h, p := splitHostPort(c.in); h != c.host || p != c.port {
				t.Errorf("splitHostPort = %q, %q; want %q, %q", h, p, c.host, c.port)
			}
		})
	}
}

func TestPointsAndDuplicates(t *testing.T) {
	c, err := NewConsistent([]Server{{Addr: "a:1", Weight: 2}, {Addr: "b:2"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Points() != 480 {
		t.Fatalf("Points = %d, want 480", c.Points())
	}
	// "a" and "a:" both hash base "a\x00": their points coincide and only the
	// first server's survive, so "a:" never receives a key.
	c, err = NewConsistent([]Server{{Addr: "a"}, {Addr: "a:"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Points() != 160 {
		t.Fatalf("Points with duplicate points = %d, want 160", c.Points())
	}
	for _, k := range randomKeys(500, 3) {
		if c.Index(k) != 0 {
			t.Fatalf("key %q went to the server whose points were all dropped", k)
		}
	}
	// With the first of the two down, every point is a down server's:
	// nginx falls back to round robin, Index to the first server up, and
	// LocateN lists that server first.
	c, err = NewConsistent([]Server{{Addr: "a", Down: true}, {Addr: "a:"}, {Addr: "b", Down: true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range randomKeys(50, 4) {
		first, _ := c.LocateN(nil, string(k), 1)
		if i := c.Index(k); i != 1 || first[0].ID != "a:" {
			t.Fatalf("key %q: Index %d, LocateN %v; want server 1, the only one up", k, i, first)
		}
	}
}

func TestParseUpstream(t *testing.T) {
	u, err := ParseUpstream(`
upstream backend {   # the pool
    hash $arg_k consistent;
    zone backend 64k;
    server 127.0.0.1:19002 weight=3;
    server 127.0.0.1:19003 max_fails=2 fail_timeout=5s down;
    server unix:/run/app.sock weight=2 max_conns=10;
    keepalive 16;
}`)
	if err != nil {
		t.Fatal(err)
	}
	want := Upstream{Name: "backend", Key: "$arg_k", Consistent: true, Servers: []Server{
		{Addr: "127.0.0.1:19002", Weight: 3}, {Addr: "127.0.0.1:19003", Weight: 1, Down: true}, {Addr: "unix:/run/app.sock", Weight: 2}}}
	if fmt.Sprint(u) != fmt.Sprint(want) {
		t.Fatalf("ParseUpstream = %+v\nwant %+v", u, want)
	}
	for _, c := range []struct {
		text string
		want error
	}{
		{"", kolco.ErrNoNodes},
		{"server a weight=0;", kolco.ErrBadWeight},
		{"server a weight=x;", kolco.ErrBadWeight},
		{"server a backup;", kolco.ErrBadConfig},
		{"server a colour=red;", kolco.ErrBadConfig},
		{"server;", kolco.ErrBadConfig},
		{"hash $a random; server a;", kolco.ErrBadConfig},
		{"server a; upstream b {}", kolco.ErrBadConfig},
	} {
		t.Run(c.text, func(t *testing.T) {
			if _, err := ParseUpstream(c.text); !errors.Is(err, c.want) {
				t.Errorf("err = %v, want %v", err, c.want)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	for _, c := range []struct {
		name    string
		servers []Server
		want    error
	}{
		{"no servers", nil, kolco.ErrNoNodes},
		{"an address twice", []Server{{Addr: "a"}, {Addr: "a"}}, kolco.ErrDuplicateNode},
		{"empty address", []Server{{Addr: ""}}, kolco.ErrBadNodeID},
		{"negative weight", []Server{{Addr: "a", Weight: -1}}, kolco.ErrBadWeight},
		{"weight above the bound", []Server{{Addr: "a", Weight: maxWeight + 1}}, kolco.ErrBadWeight},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := NewConsistent(c.servers); !errors.Is(err, c.want) {
				t.Errorf("NewConsistent(%v) err = %v, want %v", c.servers, err, c.want)
			}
			if _, err := NewModulo(c.servers); !errors.Is(err, c.want) {
				t.Errorf("NewHash(%v) err = %v, want %v", c.servers, err, c.want)
			}
		})
	}
}

func TestLocateN(t *testing.T) {
	servers := testServers()[2]
	c, _ := NewConsistent(servers)
	h, _ := NewModulo(servers)
	for _, p := range []kolco.Placement{c, h} {
		t.Run(fmt.Sprintf("%T", p), func(t *testing.T) {
			for _, k := range []string{"a", "b", "\xff"} {
				first, _ := p.Locate(k)
				got, err := p.LocateN(nil, k, 10)
				if err != nil || len(got) != len(servers) || got[0] != *first {
					t.Fatalf("LocateN(%q, 10) = %v, %v; want all %d servers, %v first", k, got, err, len(servers), first)
				}
				seen := map[string]bool{}
				for _, n := range got {
					if seen[n.ID] {
						t.Fatalf("LocateN repeats %q", n.ID)
					}
					seen[n.ID] = true
				}
			}
			if _, err := p.LocateN(nil, "a", 0); !errors.Is(err, kolco.ErrBadCount) {
				t.Fatalf("LocateN n=0 err = %v", err)
			}
			nodes := p.Nodes()
			if !sort.SliceIsSorted(nodes, func(i, j int) bool { return nodes[i].ID < nodes[j].ID }) || len(nodes) != len(servers) {
				t.Fatalf("Nodes = %v", nodes)
			}
		})
	}
}

// TestModuloRehashOrder checks LocateN of plain hash against nginx's rehash
// formula written out: hash += (crc32(decimal(n) + key) >> 16) & 0x7fff.
func TestModuloRehashOrder(t *testing.T) {
	servers := []Server{{Addr: "a", Weight: 1}, {Addr: "b", Weight: 1}, {Addr: "c", Weight: 1}, {Addr: "d", Weight: 1}}
	h, _ := NewModulo(servers)
	for _, k := range []string{"x", "yy", "zzz"} {
		var want []string
		sum := uint32(0)
		for n := 0; n <= maxRehash && len(want) < 2; n++ {
			prefix := ""
			if n > 0 {
				prefix = fmt.Sprint(n)
			}
			sum += (crc32.ChecksumIEEE([]byte(prefix+k)) >> 16) & 0x7fff
			id := servers[int(sum%4)].Addr
			if len(want) == 0 || want[0] != id {
				want = append(want, id)
			}
		}
		got, _ := h.LocateN(nil, k, 2)
		if got[0].ID != want[0] || got[1].ID != want[1] {
			t.Fatalf("LocateN(%q, 2) = %v, want %v", k, got, want)
		}
	}
}

func TestNoAllocs(t *testing.T) {
	if bytestr.Copies {
		t.Skip("the purego build copies keys; zero allocations are promised for the default build")
	}
	servers := testServers()[1]
	c, _ := NewConsistent(servers)
	h, _ := NewModulo(servers)
	key := strings.Repeat("long-key-", 20)
	dst := make([]kolco.Node, 0, 3)
	for name, p := range map[string]kolco.Placement{"consistent": c, "hash": h} {
		t.Run(name, func(t *testing.T) {
			if a := testing.AllocsPerRun(100, func() { n, _ := p.Locate(key); sink += len(n.ID) }); a != 0 {
				t.Errorf("%s Locate allocates %v", name, a)
			}
			if a := testing.AllocsPerRun(100, func() { dst, _ = p.LocateN(dst[:0], key, 3) }); a != 0 {
				t.Errorf("%s LocateN allocates %v", name, a)
			}
		})
	}
	kb := []byte(key)
	if a := testing.AllocsPerRun(100, func() { sink += c.Index(kb) + h.Index(kb) }); a != 0 {
		t.Errorf("Index allocates %v", a)
	}
}

func FuzzParseUpstream(f *testing.F) {
	f.Add("upstream u { hash $arg_k consistent; server 127.0.0.1:1 weight=2; }")
	f.Add("server a;\nserver b max_fails=1; # note")
	f.Add("server unix:/x weight=64;")
	f.Add("}}{{;;server")
	f.Fuzz(func(t *testing.T, text string) {
		u, err := ParseUpstream(text)
		if err != nil {
			return
		}
		if _, err := NewConsistent(u.Servers); err != nil && !errors.Is(err, kolco.ErrDuplicateNode) {
			t.Fatalf("parsed servers rejected: %v", err)
		}
	})
}

func FuzzIndex(f *testing.F) {
	f.Add([]byte("key"), "127.0.0.1:1", "b:2", uint8(3))
	f.Add([]byte{}, "unix:/s", "x", uint8(0))
	f.Fuzz(func(t *testing.T, key []byte, a, b string, w uint8) {
		servers := []Server{{Addr: a, Weight: int(w%8) + 1, Down: w&128 != 0}, {Addr: b}}
		c, err := NewConsistent(servers)
		if err != nil {
			return
		}
		h, _ := NewModulo(servers)
		if got, want := c.Index(key), refConsistent(refPoints(servers), servers, key); got != want {
			t.Fatalf("consistent Index = %d, reference %d", got, want)
		}
		if got, want := h.Index(key), refHash(servers, key); got != want {
			t.Fatalf("hash Index = %d, reference %d", got, want)
		}
	})
}

func BenchmarkLocate(b *testing.B) {
	key := "user:12345:profile"
	for _, n := range []int{3, 30, 300} {
		servers := make([]Server, n)
		for i := range servers {
			servers[i] = Server{Addr: fmt.Sprintf("10.0.%d.%d:11211", i/256, i%256), Weight: 1 + i%3}
		}
		c, _ := NewConsistent(servers)
		h, _ := NewModulo(servers)
		b.Run(fmt.Sprintf("consistent/n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				nd, _ := c.Locate(key)
				sink += len(nd.ID)
			}
		})
		b.Run(fmt.Sprintf("hash/n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				nd, _ := h.Locate(key)
				sink += len(nd.ID)
			}
		})
	}
}
