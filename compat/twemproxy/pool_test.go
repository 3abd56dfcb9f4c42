package twemproxy_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat/hashkit"
	"github.com/kolco-dev/kolco/compat/twemproxy"
)

var sink int

func servers(weights ...int) []twemproxy.Server {
	s := make([]twemproxy.Server, len(weights))
	for i, w := range weights {
		s[i] = twemproxy.Server{Host: "10.0.0." + strconv.Itoa(i+1), Port: 11211, Weight: w}
	}
	return s
}

func mustNew(t testing.TB, cfg twemproxy.Config, s []twemproxy.Server) *twemproxy.Pool {
	t.Helper()
	p, err := twemproxy.New(cfg, s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNewErrors(t *testing.T) {
	cases := []struct {
		name    string
		cfg     twemproxy.Config
		servers []twemproxy.Server
		want    error
	}{
		{"no servers", twemproxy.Config{}, nil, kolco.ErrNoNodes},
		{"bad hash", twemproxy.Config{Hash: "sha1"}, servers(1), kolco.ErrBadConfig},
		{"libmemcached-only hash", twemproxy.Config{Hash: "murmur3"}, servers(1), hashkit.ErrUnknown},
		{"bad distribution", twemproxy.Config{Distribution: "vbucket"}, servers(1), kolco.ErrBadConfig},
		{"random", twemproxy.Config{Distribution: "random"}, servers(1), kolco.ErrBadConfig},
		{"one-byte tag", twemproxy.Config{HashTag: "{"}, servers(1), kolco.ErrBadConfig},
		{"three-byte tag", twemproxy.Config{HashTag: "{}}"}, servers(1), kolco.ErrBadConfig},
		{"negative weight", twemproxy.Config{}, servers(1, -1), kolco.ErrBadWeight},
		{"huge total", twemproxy.Config{}, servers(1<<31-1, 1<<31-1, 2), kolco.ErrBadWeight},
		{"empty host", twemproxy.Config{}, []twemproxy.Server{{Port: 1}}, kolco.ErrBadNodeID},
		{"same ring name", twemproxy.Config{}, []twemproxy.Server{{Host: "a", Port: 11211}, {Host: "b", Port: 1, Name: "a"}}, kolco.ErrDuplicateNode},
		{"same address", twemproxy.Config{}, []twemproxy.Server{{Host: "a", Port: 1}, {Host: "a", Port: 1}}, kolco.ErrDuplicateNode},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := twemproxy.New(c.cfg, c.servers); !errors.Is(err, c.want) {
				t.Errorf("error %v, want %v", err, c.want)
			}
		})
	}
	// The same address under two names is allowed, as in nutcracker.
	if _, err := twemproxy.New(twemproxy.Config{}, []twemproxy.Server{{Host: "a", Port: 1, Name: "x"}, {Host: "a", Port: 1, Name: "y"}}); err != nil {
		t.Errorf("same address, two names: %v", err)
	}
}

// TestSingleServer checks that a one-server pool sends every key, empty or
// not, to index 0.
func TestSingleServer(t *testing.T) {
	for _, d := range []string{"ketama", "modula"} {
		t.Run(d, func(t *testing.T) {
			p := mustNew(t, twemproxy.Config{Distribution: d}, servers(3))
			for _, k := range []string{"", "a", "{x}", strings.Repeat("z", 300)} {
				if i := p.Index([]byte(k)); i != 0 {
					t.Errorf("Index(%q) = %d", k, i)
				}
			}
		})
	}
}

// TestHashTag checks the hash_tag rules against the key made of the tag's
// content alone: "{}" hashes the text between the first "{" and the first
// "}" after it when that text is not empty, else the whole key.
func TestHashTag(t *testing.T) {
	tagged := mustNew(t, twemproxy.Config{Hash: "md5", HashTag: "{}"}, servers(1, 1, 1, 1, 1, 1, 1, 1))
	plain := mustNew(t, twemproxy.Config{Hash: "md5"}, servers(1, 1, 1, 1, 1, 1, 1, 1))
	cases := []struct{ key, hashed string }{
		{"user:{42}:name", "42"},
		{"{42}", "42"},
		{"a{b}c{d}", "b"},
		{"a{{b}}", "{b"},
		{"a{}b{c}", "a{}b{c}"},
		{"}a{b", "}a{b"},
		{"no tag", "no tag"},
		{"x{y", "x{y"},
		{"x}y{z}", "z"},
	}
	for _, c := range cases {
		t.Run(c.key, func(t *testing.T) {
			if got, want := tagged.Index([]byte(c.key)), plain.Index([]byte(c.hashed)); got != want {
				t.Errorf("Index = %d, want %d (the index of %q)", got, want, c.hashed)
			}
		})
	}
}

// TestEmptyKey checks that the empty key hashes to 0: the owner of the
// lowest ketama point, or the first server in name order for modula.
func TestEmptyKey(t *testing.T) {
	s := []twemproxy.Server{{Host: "b", Port: 1, Weight: 1}, {Host: "a", Port: 1, Weight: 1}}
	p := mustNew(t, twemproxy.Config{Distribution: "modula"}, s)
	if i := p.Index(nil); i != 1 {
		t.Errorf("modula: Index(empty) = %d, want 1 (a:1 sorts first)", i)
	}
	k := mustNew(t, twemproxy.Config{}, s)
	// Point 0 of the continuum: the smallest MD5 point of any server.
	best, owner := uint32(1<<32-1), -1
	for i, srv := range s {
		for j := 0; j < 40; j++ { // 160 points: 40 digests of 4
			for _, v := range hashkit.MD5Points([]byte(srv.RingName() + "-" + strconv.Itoa(j))) {
				if v < best {
					best, owner = v, i
				}
			}
		}
	}
	if i := k.Index(nil); i != owner {
		t.Errorf("ketama: Index(empty) = %d, want %d", i, owner)
	}
}

func TestLocate(t *testing.T) {
	s := []twemproxy.Server{{Host: "h1", Port: 1, Weight: 1}, {Host: "h2", Port: 11211, Weight: 2, Name: "two"}, {Host: "::1", Port: 3, Weight: 1}}
	for _, d := range []string{"ketama", "modula"} {
		t.Run(d, func(t *testing.T) {
			p := mustNew(t, twemproxy.Config{Distribution: d}, s)
			nodes := p.Nodes()
			if len(nodes) != 3 || nodes[0].ID != "[::1]:3" || nodes[1].ID != "h1:1" || nodes[2].ID != "two" {
				t.Fatalf("Nodes() = %+v", nodes)
			}
			for i := 0; i < 200; i++ {
				key := "key-" + strconv.Itoa(i)
				n, err := p.Locate(key)
				if err != nil {
					t.Fatal(err)
				}
				idx := p.Index([]byte(key))
				if n.Addr != s[idx].Addr() || n.Weight != float64(s[idx].Weight) {
					t.Fatalf("Locate(%q) = %+v, Index = %d", key, n, idx)
				}
				all, err := p.LocateN(nil, key, 5)
				if err != nil || len(all) != 3 || all[0] != *n || all[1].ID == all[2].ID || all[0].ID == all[1].ID || all[0].ID == all[2].ID {
					t.Fatalf("LocateN(%q, 5) = %+v, %v", key, all, err)
				}
			}
			if _, err := p.LocateN(nil, "k", 0); !errors.Is(err, kolco.ErrBadCount) {
				t.Errorf("LocateN(n=0): %v", err)
			}
		})
	}
	var zero twemproxy.Pool
	if _, err := zero.Locate("k"); !errors.Is(err, kolco.ErrNoNodes) {
		t.Errorf("zero Pool Locate: %v", err)
	}
	if _, err := zero.LocateN(nil, "k", 1); !errors.Is(err, kolco.ErrNoNodes) {
		t.Errorf("zero Pool LocateN: %v", err)
	}
	if i := zero.Index([]byte("k")); i != -1 {
		t.Errorf("zero Pool Index = %d", i)
	}
}

// TestWeightShare checks that ketama gives a server of weight 3 about three
// times the keys of a server of weight 1.
func TestWeightShare(t *testing.T) {
	p := mustNew(t, twemproxy.Config{}, servers(1, 3, 1, 1))
	counts := make([]int, 4)
	const n = 60000
	for i := 0; i < n; i++ {
		counts[p.Index([]byte("k"+strconv.Itoa(i)))]++
	}
	share := float64(counts[1]) / n
	if share < 0.4 || share > 0.6 {
		t.Errorf("weight 3 of 6 got %.3f of the keys (counts %v)", share, counts)
	}
}

func FuzzIndex(f *testing.F) {
	f.Add([]byte("user:{1}"), uint8(3), "{}", "fnv1a_64", false)
	f.Add([]byte(""), uint8(1), "", "md5", true)
	f.Add([]byte("\xe9\xff{"), uint8(7), "ab", "hsieh", false)
	f.Fuzz(func(t *testing.T, key []byte, n uint8, tag, hash string, modula bool) {
		cfg := twemproxy.Config{Hash: hash, HashTag: tag}
		if modula {
			cfg.Distribution = "modula"
		}
		s := servers(make([]int, int(n%16))...)
		p, err := twemproxy.New(cfg, s)
		if err != nil {
			if !errors.Is(err, kolco.ErrBadConfig) && !errors.Is(err, kolco.ErrNoNodes) {
				t.Fatalf("New: unexpected error %v", err)
			}
			return
		}
		i := p.Index(key)
		if i < 0 || i >= len(s) {
			t.Fatalf("Index(%q) = %d with %d servers", key, i, len(s))
		}
		if nd, err := p.Locate(string(key)); err != nil || nd.Addr != s[i].Addr() {
			t.Fatalf("Locate(%q) = %+v, %v; Index = %d", key, nd, err, i)
		}
	})
}

func BenchmarkIndex(b *testing.B) {
	key := []byte("user:1234567:profile")
	for _, d := range []string{"ketama", "modula"} {
		for _, n := range []int{3, 30, 300} {
			w := make([]int, n)
			p := mustNew(b, twemproxy.Config{Distribution: d}, servers(w...))
			b.Run(d+"/"+strconv.Itoa(n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					sink += p.Index(key)
				}
			})
		}
	}
}

func BenchmarkNew(b *testing.B) {
	for _, n := range []int{3, 30, 300} {
		s := servers(make([]int, n)...)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, _ := twemproxy.New(twemproxy.Config{}, s)
				sink += p.Index(nil)
			}
		})
	}
}
