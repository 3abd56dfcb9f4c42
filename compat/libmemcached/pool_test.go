package libmemcached_test

import (
	"errors"
	"strconv"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat/hashkit"
	"github.com/kolco-dev/kolco/compat/libmemcached"
)

var sink int

func hosts(weights ...int) []libmemcached.Server {
	s := make([]libmemcached.Server, len(weights))
	for i, w := range weights {
		s[i] = libmemcached.Server{Host: "10.0.0." + strconv.Itoa(i+1), Port: 11211, Weight: w}
	}
	return s
}

func mustNew(t testing.TB, cfg libmemcached.Config, s []libmemcached.Server) *libmemcached.Pool {
	t.Helper()
	p, err := libmemcached.New(cfg, s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNewErrors(t *testing.T) {
	long := make([]byte, 1025)
	for i := range long {
		long[i] = 'a'
	}
	cases := []struct {
		name    string
		cfg     libmemcached.Config
		servers []libmemcached.Server
		want    error
	}{
		{"no servers", libmemcached.Config{}, nil, kolco.ErrNoNodes},
		{"bad hash", libmemcached.Config{Hash: "sha1"}, hosts(1), hashkit.ErrUnknown},
		{"bad hash is bad config", libmemcached.Config{Hash: "sha1"}, hosts(1), kolco.ErrBadConfig},
		{"bad distribution", libmemcached.Config{Distribution: "random"}, hosts(1), kolco.ErrBadConfig},
		{"negative weight", libmemcached.Config{}, hosts(1, -2), kolco.ErrBadWeight},
		{"weight over uint32", libmemcached.Config{}, hosts(1 << 32), kolco.ErrBadWeight},
		{"bad port", libmemcached.Config{}, []libmemcached.Server{{Host: "a", Port: 65536}}, kolco.ErrBadConfig},
		{"long host", libmemcached.Config{}, []libmemcached.Server{{Host: string(long)}}, kolco.ErrBadNodeID},
		{"NUL in host", libmemcached.Config{}, []libmemcached.Server{{Host: "a\x00b"}}, kolco.ErrBadNodeID},
		{"duplicate", libmemcached.Config{}, []libmemcached.Server{{Host: "a"}, {Host: "a", Port: 11211}}, kolco.ErrDuplicateNode},
		{"default host duplicate", libmemcached.Config{}, []libmemcached.Server{{}, {Host: "localhost"}}, kolco.ErrDuplicateNode},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := libmemcached.New(c.cfg, c.servers); !errors.Is(err, c.want) {
				t.Errorf("error %v, want %v", err, c.want)
			}
		})
	}
}

// TestDistributionNames checks that libmemcached's constant names select the
// same placement as the short names.
func TestDistributionNames(t *testing.T) {
	same := map[string]string{
		"MEMCACHED_DISTRIBUTION_MODULA": "modula",
		"":                              "modula",
		"consistent":                    "ketama",
		"MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA":     "ketama",
		"consistent_weighted":                          "ketama_weighted",
		"MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY": "ketama_spy",
	}
	s := hosts(1, 1, 1, 1)
	for alias, name := range same {
		t.Run(alias+"="+name, func(t *testing.T) {
			a, b := mustNew(t, libmemcached.Config{Distribution: alias}, s), mustNew(t, libmemcached.Config{Distribution: name}, s)
			for i := 0; i < 500; i++ {
				k := []byte("k" + strconv.Itoa(i))
				if a.Index(k) != b.Index(k) {
					t.Fatalf("disagree on %q", k)
				}
			}
		})
	}
}

func TestSingleServer(t *testing.T) {
	for _, d := range []string{"modula", "ketama", "ketama_weighted", "ketama_spy"} {
		t.Run(d, func(t *testing.T) {
			p := mustNew(t, libmemcached.Config{Distribution: d}, hosts(7))
			for _, k := range []string{"", "a", "\xff\xfe"} {
				if i := p.Index([]byte(k)); i != 0 {
					t.Errorf("Index(%q) = %d", k, i)
				}
				if h := p.Hash([]byte(k)); h != 0 {
					t.Errorf("Hash(%q) = %d, want 0 for one server", k, h)
				}
			}
		})
	}
}

// TestModula checks modula against its definition: one_at_a_time(key) % n.
func TestModula(t *testing.T) {
	p := mustNew(t, libmemcached.Config{}, hosts(1, 5, 1))
	for i := 0; i < 1000; i++ {
		k := []byte("key-" + strconv.Itoa(i))
		if got, want := p.Index(k), int(hashkit.OneAtATime(k)%3); got != want {
			t.Fatalf("Index(%q) = %d, want %d", k, got, want)
		}
	}
}

func TestLocate(t *testing.T) {
	s := []libmemcached.Server{{Host: "a", Port: 1}, {Host: "b", Weight: 3}, {Host: "::1", Port: 2}}
	for _, d := range []string{"modula", "ketama", "ketama_spy"} {
		t.Run(d, func(t *testing.T) {
			p := mustNew(t, libmemcached.Config{Distribution: d}, s)
			nodes := p.Nodes()
			if len(nodes) != 3 || nodes[0].ID != "[::1]:2" || nodes[1].ID != "a:1" || nodes[2].ID != "b:11211" || nodes[2].Weight != 3 {
				t.Fatalf("Nodes() = %+v", nodes)
			}
			for i := 0; i < 200; i++ {
				key := "key-" + strconv.Itoa(i)
				n, err := p.Locate(key)
				if err != nil || n.ID != p.Servers()[p.Index([]byte(key))].Addr() || n.Addr != n.ID {
					t.Fatalf("Locate(%q) = %+v, %v", key, n, err)
				}
				all, err := p.LocateN(nil, key, 9)
				if err != nil || len(all) != 3 || all[0] != *n || all[1].ID == all[2].ID || all[0].ID == all[1].ID || all[0].ID == all[2].ID {
					t.Fatalf("LocateN(%q, 9) = %+v, %v", key, all, err)
				}
			}
			if _, err := p.LocateN(nil, "k", 0); !errors.Is(err, kolco.ErrBadCount) {
				t.Errorf("LocateN(n=0): %v", err)
			}
		})
	}
	var zero libmemcached.Pool
	if _, err := zero.Locate("k"); !errors.Is(err, kolco.ErrNoNodes) {
		t.Errorf("zero Pool Locate: %v", err)
	}
	if _, err := zero.LocateN(nil, "k", 2); !errors.Is(err, kolco.ErrNoNodes) {
		t.Errorf("zero Pool LocateN: %v", err)
	}
}

func FuzzIndex(f *testing.F) {
	f.Add([]byte("key"), uint8(3), "ketama", "", "10.0.0.1", uint16(11211), uint32(2))
	f.Add([]byte(""), uint8(1), "modula", "md5", "", uint16(0), uint32(0))
	f.Add([]byte("\xe9"), uint8(9), "ketama_spy", "murmur3", "::1", uint16(1), uint32(1<<31))
	f.Fuzz(func(t *testing.T, key []byte, n uint8, dist, hash, host string, port uint16, weight uint32) {
		s := hosts(make([]int, int(n%12))...)
		if len(s) > 0 {
			s[0] = libmemcached.Server{Host: host, Port: int(port), Weight: int(weight)}
		}
		p, err := libmemcached.New(libmemcached.Config{Distribution: dist, Hash: hash}, s)
		if err != nil {
			for _, want := range []error{kolco.ErrBadConfig, kolco.ErrNoNodes, kolco.ErrBadNodeID, kolco.ErrDuplicateNode} {
				if errors.Is(err, want) {
					return
				}
			}
			t.Fatalf("New: unexpected error %v", err)
		}
		i := p.Index(key)
		if i < 0 || i >= len(s) {
			t.Fatalf("Index(%q) = %d with %d servers", key, i, len(s))
		}
		if nd, err := p.Locate(string(key)); err != nil || nd.ID != p.Servers()[i].Addr() {
			t.Fatalf("Locate(%q) = %+v, %v; Index = %d", key, nd, err, i)
		}
	})
}

func BenchmarkIndex(b *testing.B) {
	key := []byte("user:1234567:profile")
	for _, d := range []string{"modula", "ketama", "ketama_weighted"} {
		for _, n := range []int{3, 30, 300} {
			p := mustNew(b, libmemcached.Config{Distribution: d}, hosts(make([]int, n)...))
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
		s := hosts(make([]int, n)...)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, _ := libmemcached.New(libmemcached.Config{Distribution: "ketama_weighted"}, s)
				sink += p.Index(nil)
			}
		})
	}
}
