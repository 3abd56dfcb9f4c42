package cassandra

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/murmur3"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/bytestr"
)

var sink int

// TestTokenVectors checks tokens published with Cassandra clients that were
// validated against Cassandra: the elixir-cassandra driver's Murmur3 tests
// (test/cassandra/murmur3_test.exs), which include tails with bytes >= 0x80,
// and cassandra-sharp's Murmur3Partitioner test for the int key 0x12345678.
func TestTokenVectors(t *testing.T) {
	for _, c := range []struct {
		key  string
		want int64
	}{
		{"123", -7468325962851647638},
		{strings.Repeat("\x00\xff\x10\xfa\x99", 10), 5837342703291459765},
		{strings.Repeat("\xfe", 8), -8927430733708461935},
		{strings.Repeat("\x10", 8), 1446172840243228796},
		{"9223372036854775807", 7162290910810015547},
		{"\x01\x02\x03\x04\x05\x06\a\b\t\n\v\f\r\x0e\x0f\x10", -5563837382979743776},
		{strings.Repeat("\x00", 16), 5457549051747178710},
		{strings.Repeat("\xff", 16), -2824192546314762522},
		{strings.Repeat("\xfe", 17), -1672437813826982685},
		{"\xfe\xfe\xfe\xfe", 4566408979886474012},
		{"\x00\x00\x00\x00", -3485513579396041028},
		{"\x00\x01\x7f\x7f", 6573459401642635627},
		{"\x00\xff\xff\xff", 123573637386978882},
		{"\xff\x01\x02\x03", -2839127690952877842},
		{"\xe2\xe7", -8582699461035929883},
		{"\xe2\xe7\xe2\xe7\xe2\xe7\x01", 2222373981930033306},
		{"\x12\x34\x56\x78", -8827056344306985898},
		{"", math.MinInt64},
	} {
		t.Run(fmt.Sprintf("%q", c.key), func(t *testing.T) {
			if got := Token([]byte(c.key)); got != c.want {
				t.Errorf("Token = %d, want %d", got, c.want)
			}
		})
	}
}

// TestTokenMatchesReferenceWithoutHighTail compares with twmb/murmur3, an
// independent MurmurHash3_x64_128: Cassandra agrees with the reference
// whenever no tail byte is >= 0x80, and must differ for some keys when one is.
func TestTokenMatchesReferenceWithoutHighTail(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	differ := 0
	for range 5000 {
		k := make([]byte, 1+r.IntN(70))
		for i := range k {
			k[i] = byte(r.UintN(256))
		}
		h1, _ := murmur3.Sum128(k)
		high := false
		for _, b := range k[len(k)/16*16:] {
			high = high || b >= 0x80
		}
		got := Token(k)
		switch {
		case !high && got != int64(h1) && int64(h1) != math.MinInt64:
			t.Fatalf("Token(%x) = %d, reference h1 %d", k, got, int64(h1))
		case high && got != int64(h1):
			differ++
		}
	}
	if differ == 0 {
		t.Fatal("no key with a high tail byte differed from the reference: the sign-extension quirk is missing")
	}
}

func TestCompositeKey(t *testing.T) {
	got, err := CompositeKey(nil, []byte("ab"), []byte{1})
	if want := []byte{0, 2, 'a', 'b', 0, 0, 1, 1, 0}; err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("CompositeKey = %v, %v; want %v", got, err, want)
	}
	if _, err := CompositeKey(nil, make([]byte, 70000)); !errors.Is(err, kolco.ErrBadConfig) {
		t.Fatalf("long component err = %v", err)
	}
}

func TestRingOwnership(t *testing.T) {
	r, err := New([]Endpoint{
		{Addr: "10.0.0.1", Tokens: []int64{-100, 500}},
		{Addr: "10.0.0.2", Tokens: []int64{0}},
		{Addr: "10.0.0.3", Tokens: []int64{1000}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for tok, want := range map[int64]int{
		math.MinInt64: 0, -101: 0, -100: 0, -99: 1, 0: 1, 1: 0, 500: 0, 501: 2, 1000: 2, 1001: 0, math.MaxInt64: 0,
	} {
		t.Run(strconv.FormatInt(tok, 10), func(t *testing.T) {
			if got := r.IndexToken(tok); got != want {
				t.Errorf("IndexToken = %d, want %d", got, want)
			}
		})
	}
	// The empty key has the minimum token: the smallest token's owner.
	if got := r.Index(nil); got != 0 {
		t.Errorf("Index(empty) = %d, want 0", got)
	}
	got, _ := r.LocateN(nil, "\x12\x34\x56\x78", 3) // token -8827056344306985898 -> -100 first
	if len(got) != 3 || got[0].Addr != "10.0.0.1" || got[1].Addr != "10.0.0.2" || got[2].Addr != "10.0.0.3" {
		t.Fatalf("LocateN = %v", got)
	}
	if _, err := r.LocateN(nil, "k", 0); !errors.Is(err, kolco.ErrBadCount) {
		t.Fatalf("n=0 err = %v", err)
	}
}

// TestRingMatchesReference checks ring lookups against a linear scan.
func TestRingMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	eps := make([]Endpoint, 5)
	for i := range eps {
		eps[i].Addr = fmt.Sprintf("10.0.0.%d", i+1)
		for range 16 {
			eps[i].Tokens = append(eps[i].Tokens, int64(r.Uint64()))
		}
	}
	ring, err := New(eps)
	if err != nil {
		t.Fatal(err)
	}
	for range 3000 {
		tok := int64(r.Uint64())
		best, bestTok, low, lowTok := -1, int64(0), -1, int64(0)
		for i, e := range eps {
			for _, x := range e.Tokens {
				if x >= tok && (best < 0 || x < bestTok) {
					best, bestTok = i, x
				}
				if low < 0 || x < lowTok {
					low, lowTok = i, x
				}
			}
		}
		if best < 0 {
			best = low
		}
		if got := ring.IndexToken(tok); got != best {
			t.Fatalf("IndexToken(%d) = %d, reference %d", tok, got, best)
		}
	}
}

func TestNewErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		eps  []Endpoint
		want error
	}{
		{"no endpoints", nil, kolco.ErrNoNodes},
		{"no tokens", []Endpoint{{Addr: "a"}}, kolco.ErrNoNodes},
		{"a token held twice", []Endpoint{{Addr: "a", Tokens: []int64{1}}, {Addr: "b", Tokens: []int64{1}}}, kolco.ErrBadConfig},
		{"an address twice", []Endpoint{{Addr: "a", Tokens: []int64{1}}, {Addr: "a", Tokens: []int64{2}}}, kolco.ErrDuplicateNode},
		{"no id or address", []Endpoint{{Tokens: []int64{1}}}, kolco.ErrBadNodeID},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := New(c.eps); !errors.Is(err, c.want) {
				t.Errorf("New(%v) err = %v, want %v", c.eps, err, c.want)
			}
		})
	}
}

const nodetoolRing = `
Datacenter: datacenter1
==========
Address    Rack        Status State   Load            Owns                Token
                                                                          3074457345618258602
127.0.0.1  rack1       Up     Normal  103.52 KiB      33.33%              -9223372036854775808
127.0.0.2  rack1       Up     Normal  98.84 KiB       33.33%              -3074457345618258603
127.0.0.1  rack1       Up     Normal  103.52 KiB      33.33%              1
::1        rack1       Up     Normal  101.3 KiB       33.33%              3074457345618258602
`

func TestParseNodetoolRing(t *testing.T) {
	got, err := ParseNodetoolRing(nodetoolRing)
	want := []Endpoint{
		{Addr: "127.0.0.1", Tokens: []int64{math.MinInt64, 1}},
		{Addr: "127.0.0.2", Tokens: []int64{-3074457345618258603}},
		{Addr: "::1", Tokens: []int64{3074457345618258602}},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseNodetoolRing = %v, %v; want %v", got, err, want)
	}
	if _, err := ParseNodetoolRing("Address Token\n"); !errors.Is(err, kolco.ErrNoNodes) {
		t.Fatalf("no tokens err = %v", err)
	}
}

func TestNoAllocs(t *testing.T) {
	if bytestr.Copies {
		t.Skip("the purego build copies keys; zero allocations are promised for the default build")
	}
	eps, _ := ParseNodetoolRing(nodetoolRing)
	r, _ := New(eps)
	key := strings.Repeat("long-key-", 20)
	kb := []byte(key)
	dst := make([]kolco.Node, 0, 3)
	if a := testing.AllocsPerRun(100, func() { n, _ := r.Locate(key); sink += len(n.ID) + r.Index(kb) }); a != 0 {
		t.Errorf("Locate/Index allocate %v", a)
	}
	if a := testing.AllocsPerRun(100, func() { dst, _ = r.LocateN(dst[:0], key, 3) }); a != 0 {
		t.Errorf("LocateN allocates %v", a)
	}
}

func FuzzParseNodetoolRing(f *testing.F) {
	f.Add(nodetoolRing)
	f.Add("10.0.0.1 x 5\n10.0.0.1 y 5")
	f.Fuzz(func(t *testing.T, text string) {
		eps, err := ParseNodetoolRing(text)
		if err != nil {
			return
		}
		r, err := New(eps)
		if err != nil {
			return
		}
		if i := r.Index([]byte(text)); i < 0 || i >= len(eps) {
			t.Fatalf("Index = %d", i)
		}
	})
}

func FuzzToken(f *testing.F) {
	f.Add([]byte("123"))
	f.Add([]byte{0xe2, 0xe7})
	f.Fuzz(func(t *testing.T, key []byte) {
		got := Token(key)
		if len(key) == 0 {
			if got != math.MinInt64 {
				t.Fatalf("empty key token %d", got)
			}
			return
		}
		if got == math.MinInt64 {
			t.Fatal("a non-empty key got the minimum token")
		}
		// Clearing the sign-extension quirk (only < 0x80 tail bytes) must
		// give the reference hash.
		clean := append([]byte(nil), key...)
		for i := len(clean) / 16 * 16; i < len(clean); i++ {
			clean[i] &= 0x7f
		}
		h1, _ := murmur3.Sum128(clean)
		if int64(h1) != math.MinInt64 && Token(clean) != int64(h1) {
			t.Fatalf("Token(%x) = %d, reference %d", clean, Token(clean), int64(h1))
		}
	})
}

func BenchmarkLocate(b *testing.B) {
	key := binary.BigEndian.AppendUint64(nil, 123456789)
	for _, n := range []int{3, 30, 300} {
		r := rand.New(rand.NewPCG(1, uint64(n)))
		eps := make([]Endpoint, n)
		for i := range eps {
			eps[i].Addr = fmt.Sprintf("10.0.%d.%d", i/256, i%256)
			for range 16 {
				eps[i].Tokens = append(eps[i].Tokens, int64(r.Uint64()))
			}
		}
		ring, _ := New(eps)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sink += ring.Index(key)
			}
		})
	}
}
