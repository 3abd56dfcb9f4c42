package haproxy

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/bytestr"
)

var sink int

func TestParseHashType(t *testing.T) {
	for _, c := range []struct {
		in   string
		want HashType
	}{
		{"consistent", HashType{Consistent, SDBM, true}},
		{"hash-type consistent sdbm", HashType{Consistent, SDBM, false}},
		{"consistent djb2 avalanche", HashType{Consistent, DJB2, true}},
		{"map-based", HashType{MapBased, SDBM, false}},
		{"map-based wt6 avalanche", HashType{MapBased, WT6, true}},
		{"map-based crc32", HashType{MapBased, CRC32, false}},
	} {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseHashType(c.in)
			if err != nil || got != c.want {
				t.Errorf("ParseHashType = %v, %v; want %v", got, err, c.want)
			}
		})
	}
	for _, bad := range []string{"", "avalanche", "consistent md5", "consistent sdbm fast", "map-based sdbm avalanche x"} {
		t.Run("bad/"+bad, func(t *testing.T) {
			if _, err := ParseHashType(bad); !errors.Is(err, kolco.ErrBadConfig) {
				t.Errorf("err = %v, want ErrBadConfig", err)
			}
		})
	}
}

// TestHashFunctions checks the hash functions against values worked out by
// hand from their definitions and, for crc32, against hash/crc32.
func TestHashFunctions(t *testing.T) {
	ab := []byte("ab")
	sdbmA := uint32('a')
	sdbmAB := uint32('b') + sdbmA<<6 + sdbmA<<16 - sdbmA
	for _, c := range []struct {
		h    HashType
		key  []byte
		want uint32
	}{
		{HashType{Func: SDBM}, nil, 0},
		{HashType{Func: SDBM}, ab, sdbmAB},
		{HashType{Func: DJB2}, nil, 5381},
		{HashType{Func: DJB2}, ab, (5381*33+'a')*33 + 'b'},
		{HashType{Func: CRC32}, ab, crc32.ChecksumIEEE(ab)},
		{HashType{Func: WT6}, nil, 0xa53c965a ^ 0x5ca6953a},
		{HashType{Func: DJB2, Avalanche: true}, nil, FullHash(5381)},
	} {
		t.Run(fmt.Sprintf("%v/%q", c.h, c.key), func(t *testing.T) {
			if got := c.h.Hash(c.key); got != c.want {
				t.Errorf("Hash = %d, want %d", got, c.want)
			}
		})
	}
	// full_hash is a bijection: distinct inputs never collide.
	seen := map[uint32]bool{}
	for i := range uint32(100000) {
		if h := FullHash(i * 4096); seen[h] {
			t.Fatalf("FullHash collision at %d", i)
		} else {
			seen[h] = true
		}
	}
}

func TestAssignIDs(t *testing.T) {
	servers := []Server{{ID: 0}, {ID: 7}, {ID: 0}, {ID: 3}, {ID: 0}, {ID: 0}}
	got, err := assignIDs(servers)
	// The counter steps once per line: s0 takes 1; s1 is explicit (counter
	// now 3); 3 belongs to s3, so s2 takes 4 (counter 5); s3 is explicit
	// (counter 6); s4 takes 6; 7 belongs to s1, so s5 takes 8.
	want := []uint32{1, 7, 4, 3, 6, 8}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("assignIDs = %v, %v; want %v", got, err, want)
	}
	if _, err := assignIDs([]Server{{ID: 2}, {ID: 2}}); !errors.Is(err, kolco.ErrDuplicateNode) {
		t.Fatalf("duplicate id err = %v", err)
	}
}

// TestMapTable checks the map-based table for weights 1, 2, 3, worked out by
// hand from lb_map.c's recalc_server_map, and the gcd reduction.
func TestMapTable(t *testing.T) {
	p, err := New([]Server{{Name: "a", Weight: 1}, {Name: "b", Weight: 2}, {Name: "c", Weight: 3}}, HashType{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int32{0, 2, 1, 2, 1, 2}; !reflect.DeepEqual(p.table, want) {
		t.Fatalf("table = %v, want %v", p.table, want)
	}
	p, _ = New([]Server{{Name: "a", Weight: 2}, {Name: "b", Weight: 4}, {Name: "c", Weight: 6}}, HashType{})
	if want := []int32{0, 2, 1, 2, 1, 2}; !reflect.DeepEqual(p.table, want) {
		t.Fatalf("table for 2,4,6 = %v, want the 1,2,3 table %v", p.table, want)
	}
	for h := range uint32(12) {
		if got := p.IndexHash(h); got != int(p.table[h%6]) {
			t.Fatalf("IndexHash(%d) = %d", h, got)
		}
	}
}

// refConsistent lists every node and picks the nearest by a linear scan, with
// HAProxy's rules written out: the successor (first >= h, else the lowest)
// and its predecessor, ties to the predecessor.
func refConsistent(servers []Server, puids []uint32, h uint32) int {
	type nd struct {
		key   uint32
		owner int
	}
	var all []nd
	for i, s := range servers {
		if s.Backup {
			continue
		}
		for j := 0; j < 16*s.Weight; j++ {
			all = append(all, nd{FullHash(puids[i]*4096 + uint32(j)), i})
		}
	}
	next, lowest, highest := -1, 0, 0
	for i, n := range all {
		if n.key >= h && (next < 0 || n.key < all[next].key) {
			next = i
		}
		if n.key < all[lowest].key {
			lowest = i
		}
		if n.key > all[highest].key {
			highest = i
		}
	}
	if next < 0 {
		next = lowest
	}
	prev := -1
	for i, n := range all {
		if n.key < all[next].key && (prev < 0 || n.key > all[prev].key) {
			prev = i
		}
	}
	if prev < 0 {
		prev = highest
	}
	if h-all[prev].key <= all[next].key-h {
		return all[prev].owner
	}
	return all[next].owner
}

func TestConsistentMatchesReference(t *testing.T) {
	servers := []Server{{Name: "a", Weight: 1}, {Name: "b", Weight: 3, ID: 7}, {Name: "c", Weight: 2}, {Name: "d", Weight: 1, Backup: true}}
	puids, _ := assignIDs(servers)
	for _, ht := range []HashType{{Consistent, SDBM, true}, {Consistent, DJB2, false}, {Consistent, CRC32, true}} {
		t.Run(ht.String(), func(t *testing.T) {
			p, err := New(servers, ht)
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(1, 2))
			for range 3000 {
				h := r.Uint32()
				if got, want := p.IndexHash(h), refConsistent(servers, puids, h); got != want {
					t.Fatalf("IndexHash(%d) = %d, reference %d", h, got, want)
				}
			}
			last := p.ring.At(p.ring.Len() - 1)
			for _, h := range []uint32{p.ring.At(0), p.ring.At(1), p.ring.At(2), 0, ^uint32(0), last, last + 1} {
				if got, want := p.IndexHash(h), refConsistent(servers, puids, h); got != want {
					t.Fatalf("IndexHash(%d) = %d, reference %d", h, got, want)
				}
			}
		})
	}
}

func TestParseBackend(t *testing.T) {
	b, err := ParseBackend(`
backend app   # hashed on a header
    balance hdr(X-Key)
    hash-type consistent djb2
    default-server inter 2s weight 4
    server s1 10.0.0.1:80 check weight 3 id 7
    server s2 10.0.0.2:80 maxconn 100 check
    server s3 10.0.0.3:80 backup weight 0
`)
	want := Backend{Name: "app", Hash: HashType{Consistent, DJB2, false}, Servers: []Server{
		{"s1", "10.0.0.1:80", 3, 7, false}, {"s2", "10.0.0.2:80", 4, 0, false}, {"s3", "10.0.0.3:80", 0, 0, true}}}
	if err != nil || !reflect.DeepEqual(b, want) {
		t.Fatalf("ParseBackend = %+v, %v\nwant %+v", b, err, want)
	}
	for _, c := range []struct {
		text string
		want error
	}{
		{"", kolco.ErrNoNodes},
		{"server s1", kolco.ErrBadConfig},
		{"server s1 a:1 weight 257", kolco.ErrBadWeight},
		{"server s1 a:1 weight", kolco.ErrBadConfig},
		{"server s1 a:1 id 0", kolco.ErrBadConfig},
		{"server s1 a:1 disabled", kolco.ErrBadConfig},
		{"server s1 a:1 frobnicate", kolco.ErrBadConfig},
		{"hash-type fancy\nserver s1 a:1", kolco.ErrBadConfig},
		{"hash-balance-factor 150\nserver s1 a:1", kolco.ErrBadConfig},
	} {
		t.Run(c.text, func(t *testing.T) {
			if _, err := ParseBackend(c.text); !errors.Is(err, c.want) {
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
		{"weight 0", []Server{{Name: "a", Weight: 0}}, kolco.ErrNoNodes},
		{"backup only", []Server{{Name: "a", Weight: 1, Backup: true}}, kolco.ErrNoNodes},
		{"a name twice", []Server{{Name: "a", Weight: 1}, {Name: "a", Weight: 1}}, kolco.ErrDuplicateNode},
		{"no name", []Server{{Name: "", Weight: 1}}, kolco.ErrBadNodeID},
		{"weight 300", []Server{{Name: "a", Weight: 300}}, kolco.ErrBadWeight},
		{"negative id", []Server{{Name: "a", Weight: 1, ID: -1}}, kolco.ErrBadConfig},
	} {
		for _, ht := range []HashType{{}, {Type: Consistent}} {
			t.Run(c.name+"/"+ht.Type.String(), func(t *testing.T) {
				if _, err := New(c.servers, ht); !errors.Is(err, c.want) {
					t.Errorf("New(%v) err = %v, want %v", c.servers, err, c.want)
				}
			})
		}
	}
}

func TestLocateN(t *testing.T) {
	servers := []Server{{Name: "a", Weight: 1}, {Name: "b", Weight: 3}, {Name: "c", Weight: 2}, {Name: "z", Weight: 1, Backup: true}}
	for _, ht := range []HashType{{}, {Type: Consistent, Avalanche: true}} {
		t.Run(ht.String(), func(t *testing.T) {
			p, _ := New(servers, ht)
			for _, k := range []string{"a", "key", "\xff\xfe"} {
				first, _ := p.Locate(k)
				got, err := p.LocateN(nil, k, 5)
				if err != nil || len(got) != 3 || got[0] != *first {
					t.Fatalf("%v LocateN(%q, 5) = %v, %v", ht, k, got, err)
				}
				if got[0].ID == got[1].ID || got[1].ID == got[2].ID || got[0].ID == got[2].ID {
					t.Fatalf("LocateN repeats: %v", got)
				}
			}
			if _, err := p.LocateN(nil, "a", 0); !errors.Is(err, kolco.ErrBadCount) {
				t.Fatalf("n=0 err = %v", err)
			}
			if nodes := p.Nodes(); len(nodes) != 3 || nodes[0].ID != "a" || nodes[2].ID != "c" {
				t.Fatalf("Nodes = %v (backup z must not be listed)", nodes)
			}
		})
	}
}

func TestNoAllocs(t *testing.T) {
	if bytestr.Copies {
		t.Skip("the purego build copies keys; zero allocations are promised for the default build")
	}
	servers := []Server{{Name: "a", Weight: 1}, {Name: "b", Weight: 3}, {Name: "c", Weight: 2}}
	key := strings.Repeat("long-key-", 20)
	dst := make([]kolco.Node, 0, 3)
	for _, ht := range []HashType{{Func: CRC32}, {Type: Consistent, Func: WT6, Avalanche: true}} {
		t.Run(ht.String(), func(t *testing.T) {
			p, _ := New(servers, ht)
			if a := testing.AllocsPerRun(100, func() { n, _ := p.Locate(key); sink += len(n.ID) }); a != 0 {
				t.Errorf("%v Locate allocates %v", ht, a)
			}
			if a := testing.AllocsPerRun(100, func() { dst, _ = p.LocateN(dst[:0], key, 3) }); a != 0 {
				t.Errorf("%v LocateN allocates %v", ht, a)
			}
		})
	}
}

func FuzzParseBackend(f *testing.F) {
	f.Add("backend b\n hash-type consistent\n server s1 127.0.0.1:1 weight 3 id 7\n server s2 x:2 backup")
	f.Add("default-server weight 256\nserver a b check inter")
	f.Add("server a b id 4294967297")
	f.Fuzz(func(t *testing.T, text string) {
		b, err := ParseBackend(text)
		if err != nil {
			return
		}
		p, err := New(b.Servers, b.Hash)
		if err != nil {
			return
		}
		if i := p.Index([]byte(text)); i < 0 || i >= len(b.Servers) || b.Servers[i].Backup || b.Servers[i].Weight == 0 {
			t.Fatalf("Index = %d, not an active server", i)
		}
	})
}

func FuzzIndex(f *testing.F) {
	f.Add([]byte("key"), uint8(1), uint8(3), uint8(7), uint8(0))
	f.Add([]byte{0xff}, uint8(255), uint8(0), uint8(1), uint8(5))
	f.Fuzz(func(t *testing.T, key []byte, w1, w2, id, mode uint8) {
		servers := []Server{{Name: "a", Weight: int(w1) % 8}, {Name: "b", Weight: int(w2)%8 + 1, ID: int(id)}}
		ht := HashType{Type: Type(mode % 2), Func: Func(mode / 2 % 4), Avalanche: mode&8 != 0}
		p, err := New(servers, ht)
		if err != nil {
			t.Fatal(err)
		}
		got := p.Index(key)
		if ht.Type == Consistent {
			puids, _ := assignIDs(servers)
			if want := refConsistent(servers, puids, ht.Hash(key)); got != want {
				t.Fatalf("Index = %d, reference %d", got, want)
			}
		} else if servers[got].Weight == 0 {
			t.Fatalf("Index chose a weight-0 server")
		}
	})
}

func BenchmarkLocate(b *testing.B) {
	key := "user:12345:profile"
	for _, n := range []int{3, 30, 300} {
		servers := make([]Server, n)
		for i := range servers {
			servers[i] = Server{Name: fmt.Sprint("s", i), Weight: 1 + i%4}
		}
		for _, ht := range []HashType{{}, {Type: Consistent, Avalanche: true}} {
			p, _ := New(servers, ht)
			b.Run(fmt.Sprintf("%s/n=%d", ht.Type, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					nd, _ := p.Locate(key)
					sink += len(nd.ID)
				}
			})
		}
	}
}

func TestHeaderValue(t *testing.T) {
	for in, want := range map[string]string{
		"abc":                 "abc",
		"  a b \t":            "a b",
		"a, b":                "a",
		`"x,y", z`:            `"x,y"`,
		`"q\",r",s`:           `"q\",r"`,
		`a"b,c"d,e`:           `a"b,c"d`,
		", b":                 "",
		"":                    "",
		"\xe9t\xe9 ,\xff":     "\xe9t\xe9",
		"\"unterminated, yes": "\"unterminated, yes",
	} {
		t.Run(fmt.Sprintf("%q", in), func(t *testing.T) {
			if got := string(HeaderValue([]byte(in))); got != want {
				t.Errorf("HeaderValue = %q, want %q", got, want)
			}
		})
	}
}

func FuzzHeaderValue(f *testing.F) {
	f.Add([]byte(`"x,y", z`))
	f.Add([]byte(" a\\,b "))
	f.Fuzz(func(t *testing.T, v []byte) {
		got := HeaderValue(v)
		if len(got) > 0 && (isLWS(got[0]) || isLWS(got[len(got)-1])) {
			t.Fatalf("HeaderValue(%q) = %q keeps blanks", v, got)
		}
		if !bytes.Contains(v, got) {
			t.Fatalf("HeaderValue(%q) = %q is not part of the value", v, got)
		}
	})
}
