package pymemcache_test

import (
	"errors"
	"slices"
	"strconv"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat/hashkit"
	"github.com/kolco-dev/kolco/compat/pymemcache"
)

var sink int

func TestNodeName(t *testing.T) {
	cases := map[string]string{
		"127.0.0.1:11211":   "127.0.0.1:11211",
		"cache":             "cache:11211",
		"cache:011212":      "cache:11212",
		"cache: 7 ":         "cache:7",
		"cache:1_000":       "cache:1000",
		"[::1]:11211":       "::1:11211",
		"[::1]":             "::1:11211",
		"/var/run/mc.sock":  "/var/run/mc.sock",
		"unix:/tmp/mc.sock": "/tmp/mc.sock",
		"a:b:9":             "a:b:9",
		"::1":               "::1", // host ":" and port 1, as Python splits it
	}
	for spec, want := range cases {
		t.Run(spec, func(t *testing.T) {
			if got, err := pymemcache.NodeName(spec); err != nil || got != want {
				t.Errorf("NodeName = %q, %v; want %q", got, err, want)
			}
		})
	}
	for _, bad := range []string{"", "unix:", "h:", "h:x", "h:1__0", "h:_1", "h:1.5"} {
		t.Run("bad/"+bad, func(t *testing.T) {
			if got, err := pymemcache.NodeName(bad); !errors.Is(err, pymemcache.ErrBadServer) {
				t.Errorf("NodeName = %q, %v; want ErrBadServer", got, err)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		specs []string
		want  error
	}{
		{"no servers", nil, kolco.ErrNoNodes},
		{"one node twice", []string{"a", "a:11211"}, kolco.ErrDuplicateNode},
		{"bad port", []string{"a:x"}, pymemcache.ErrBadServer},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := pymemcache.New(c.specs); !errors.Is(err, c.want) {
				t.Errorf("New(%q): %v, want %v", c.specs, err, c.want)
			}
		})
	}
}

// TestScoreASCII checks that for ASCII text the score is plain
// MurmurHash3_x86_32 (seed 0) of "node-key".
func TestScoreASCII(t *testing.T) {
	for i := 0; i < 300; i++ {
		node, key := "10.0.0."+strconv.Itoa(i%7)+":11211", "key:"+strconv.Itoa(i*i)
		if got, want := pymemcache.Score(node, []byte(key)), hashkit.Murmur3Seed([]byte(node+"-"+key), 0); got != want {
			t.Fatalf("Score(%q, %q) = %d, want %d", node, key, got, want)
		}
	}
}

// TestScoreLowByte checks that a character is hashed as the low byte of its
// code point and an invalid byte as itself: same is the byte string hashed.
func TestScoreLowByte(t *testing.T) {
	cases := []struct{ key, same string }{
		{"é", "\xe9"},            // U+00E9 -> 0xE9
		{"\xe9", "\xe9"},         // a lone 0xE9 byte is itself
		{"€", "\xac"},            // U+20AC -> 0xAC
		{"😀x", "\x00x"},          // U+1F600 -> 0x00
		{"Жa", "\x16a"},          // U+0416 -> 0x16
		{"a\xffb", "a\xffb"},     // invalid 0xFF stands for itself
		{"\xe2\x82", "\xe2\x82"}, // truncated sequence: two bytes
	}
	for _, c := range cases {
		t.Run(c.key, func(t *testing.T) {
			if a, b := pymemcache.Score("n:1", []byte(c.key)), hashkit.Murmur3Seed([]byte("n:1-"+c.same), 0); a != b {
				t.Errorf("Score = %d, want murmur3 of %q = %d", a, c.same, b)
			}
		})
	}
}

func TestLocateN(t *testing.T) {
	specs := []string{"a:1", "b:1", "c:1", "d:1", "e:1"}
	p, err := pymemcache.New(specs)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 300; i++ {
		key := "k" + strconv.Itoa(i)
		all, err := p.LocateN(nil, key, 10)
		if err != nil || len(all) != 5 {
			t.Fatalf("LocateN(%q) = %v, %v", key, all, err)
		}
		first, _ := p.Locate(key)
		if all[0] != *first {
			t.Fatalf("LocateN(%q)[0] = %v, Locate = %v", key, all[0], first)
		}
		// Each next node is the winner once the ones before are removed.
		rest := slices.Clone(specs)
		for _, n := range all {
			q, _ := pymemcache.New(rest)
			if got, _ := q.Locate(key); got.ID != n.ID {
				t.Fatalf("LocateN(%q) = %v; with %v the winner is %v", key, all, rest, got)
			}
			rest = slices.DeleteFunc(rest, func(s string) bool { return s == n.ID })
		}
	}
	if _, err := p.LocateN(nil, "k", 0); !errors.Is(err, kolco.ErrBadCount) {
		t.Errorf("LocateN(n=0): %v", err)
	}
	var zero pymemcache.Pool
	if _, err := zero.Locate("k"); !errors.Is(err, kolco.ErrNoNodes) {
		t.Errorf("zero Pool: %v", err)
	}
	if nodes := p.Nodes(); len(nodes) != 5 || nodes[0].ID != "a:1" || nodes[0].Addr != "a:1" {
		t.Errorf("Nodes() = %v", nodes)
	}
}

func FuzzIndex(f *testing.F) {
	f.Add([]byte("key"), "a:1", "b")
	f.Add([]byte("\xe9\xff'\""), "unix:/x", "[::1]:5")
	f.Fuzz(func(t *testing.T, key []byte, s1, s2 string) {
		p, err := pymemcache.New([]string{s1, s2})
		if err != nil {
			if !errors.Is(err, pymemcache.ErrBadServer) && !errors.Is(err, kolco.ErrDuplicateNode) {
				t.Fatalf("New: %v", err)
			}
			return
		}
		for _, i := range []int{p.Index(key), p.IndexBytesKey(key)} {
			if i < 0 || i > 1 {
				t.Fatalf("index %d", i)
			}
		}
		n, err := p.Locate(string(key))
		if err != nil || n.ID != p.Names()[p.Index(key)] {
			t.Fatalf("Locate = %v, %v", n, err)
		}
	})
}

func FuzzNodeName(f *testing.F) {
	for _, s := range []string{"h:1", "h", "[::1]:2", "/p", "unix:/p", "h: 1_0 ", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		name, err := pymemcache.NodeName(spec)
		if err != nil && !errors.Is(err, pymemcache.ErrBadServer) {
			t.Fatalf("NodeName(%q): %v", spec, err)
		}
		if err == nil && name == "" {
			t.Fatalf("NodeName(%q) is empty", spec)
		}
	})
}

func BenchmarkIndex(b *testing.B) {
	key := []byte("user:1234567:profile")
	for _, n := range []int{3, 10, 100} {
		specs := make([]string, n)
		for i := range specs {
			specs[i] = "10.0.0." + strconv.Itoa(i) + ":11211"
		}
		p, _ := pymemcache.New(specs)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sink += p.Index(key)
			}
		})
	}
}
