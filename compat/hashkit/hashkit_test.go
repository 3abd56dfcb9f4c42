package hashkit_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/compat/hashkit"
)

var sink uint32

// TestApple checks the published values for the key "apple" (COMPAT.md
// section 1, read from the C programs).
func TestApple(t *testing.T) {
	want := map[string]uint32{
		"one_at_a_time": 2297466611,
		"md5":           3195025439,
		"crc":           10542,
		"crc32":         10542,
		"crc32a":        2838417488,
		"fnv1_32":       67176023,
		"fnv1a_32":      280767167,
		"fnv1_64":       473199127,
		"fnv1a_64":      1488911807,
		"hsieh":         3738850110,
		"jenkins":       1442444624,
		"murmur":        4142305122,
		"crc16":         3662830516,
	}
	for name, w := range want {
		t.Run(name, func(t *testing.T) {
			f, err := hashkit.Parse(name)
			if err != nil {
				t.Fatal(err)
			}
			if got := f([]byte("apple")); got != w {
				t.Errorf("%s(apple) = %d, want %d", name, got, w)
			}
		})
	}
}

// TestKetamaPoints checks the float32 point count against values worked out
// by hand from the C expression: equal weights give 160, except where
// float32 rounding of 1/n*40*n lands just below 40.
func TestKetamaPoints(t *testing.T) {
	for _, c := range []struct {
		w, total uint64
		n, want  int
	}{
		{1, 1, 1, 160},
		{1, 3, 3, 160},
		{1, 10, 10, 160},
		{1, 25, 25, 156}, // 1/25*40*25 rounds to 39.999996
		{1, 6, 4, 104},   // 1/6*40*4 = 26.67 -> 26*4
		{3, 6, 4, 320},   // 0.5*40*4 = 80
		{1, 1000, 2, 0},  // 0.08 -> 0
	} {
		t.Run(fmt.Sprintf("w=%d/total=%d/n=%d", c.w, c.total, c.n), func(t *testing.T) {
			if got := hashkit.KetamaPoints(c.w, c.total, c.n); got != c.want {
				t.Errorf("KetamaPoints = %d, want %d", got, c.want)
			}
		})
	}
}

// TestKetamaPointsDoubleAdd checks that twemproxy's form of the count, which
// adds the 1e-10 in double before rounding to float, agrees with
// libmemcached's, which adds it in float, over every weight split of up to
// 300 servers and random large ones.
func TestKetamaPointsDoubleAdd(t *testing.T) {
	twemproxy := func(w, total uint64, n int) int {
		x := float32(float32(float32(w)/float32(total)*160) / 4 * float32(n))
		return int(float32(math.Floor(float64(float32(float64(x)+0.0000000001)))) * 4)
	}
	check := func(w, total uint64, n int) {
		if got, want := hashkit.KetamaPoints(w, total, n), twemproxy(w, total, n); got != want {
			t.Fatalf("KetamaPoints(%d, %d, %d) = %d, twemproxy's expression %d", w, total, n, got, want)
		}
	}
	for n := 1; n <= 300; n++ {
		for total := uint64(n); total <= uint64(n)*4; total++ {
			for w := uint64(1); w <= min(total, 12); w++ {
				check(w, total, n)
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		total := r.Uint64N(1<<32) + 1
		check(r.Uint64N(total)+1, total, r.IntN(100_000)+1)
	}
}

// TestMurmur3Reference checks MurmurHash3_x86_32 against the vectors
// published with SMHasher's verification set and widely reproduced.
func TestMurmur3Reference(t *testing.T) {
	cases := []struct {
		in   string
		seed uint32
		want uint32
	}{
		{"", 0, 0},
		{"", 1, 0x514E28B7},
		{"", 0xffffffff, 0x81F16F39},
		{"\xff\xff\xff\xff", 0, 0x76293B50},
		{"!Ce\x87", 0, 0xF55B516B},
		{"!Ce\x87", 0x5082EDEE, 0x2362F9DE},
		{"!Ce", 0, 0x7E4A8634},
		{"!C", 0, 0xA0F7B07A},
		{"!", 0, 0x72661CF4},
		{"\x00\x00\x00\x00", 0, 0x2362F9DE},
		{"Hello, world!", 1234, 0xfaf6cdb3},
		{"The quick brown fox jumps over the lazy dog", 0x9747b28c, 0x2FA826CD},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%q/%#x", c.in, c.seed), func(t *testing.T) {
			if got := hashkit.Murmur3Seed([]byte(c.in), c.seed); got != c.want {
				t.Errorf("Murmur3Seed = %#x, want %#x", got, c.want)
			}
		})
	}
}

// TestCRC16Unmasked checks twemproxy's crc16 against the CRC-16/XMODEM check
// value where the register stays within 16 bits (one byte), and that longer
// keys carry bits above 15 as the C code does.
func TestCRC16Unmasked(t *testing.T) {
	if got := hashkit.CRC16([]byte("123456789")) & 0xffff; got != 0x31C3 {
		t.Errorf("crc16(123456789) low 16 bits = %#x, want 0x31c3 (XMODEM check)", got)
	}
	if got := hashkit.CRC16([]byte("apple")); got <= 0xffff {
		t.Errorf("crc16(apple) = %#x fits 16 bits; the register must not be masked", got)
	}
}

func TestParse(t *testing.T) {
	for _, n := range hashkit.Names() {
		t.Run(n, func(t *testing.T) {
			for _, v := range []string{n, strings.ToUpper(n), "MEMCACHED_HASH_" + strings.ToUpper(n), "hashkit_hash_" + n} {
				if _, err := hashkit.Parse(v); err != nil {
					t.Errorf("Parse(%q): %v", v, err)
				}
			}
		})
	}
	for _, bad := range []string{"", "sha1", "crc32b", "fnv", "murmur2"} {
		t.Run("bad/"+bad, func(t *testing.T) {
			if _, err := hashkit.Parse(bad); !errors.Is(err, hashkit.ErrUnknown) {
				t.Errorf("error %v, want ErrUnknown", err)
			}
		})
	}
	d, _ := hashkit.Parse("default")
	if d([]byte("apple")) != hashkit.OneAtATime([]byte("apple")) {
		t.Error("default is not one_at_a_time")
	}
}

// TestSignedChars checks the signed-char widening against straightforward
// reference loops written here from the C text.
func TestSignedChars(t *testing.T) {
	key := []byte{0xe9, 'a', 0x80, 0xff, 'z'}
	var oaat uint32
	for _, b := range key {
		oaat += uint32(int32(int8(b)))
		oaat += oaat << 10
		oaat ^= oaat >> 6
	}
	oaat += oaat << 3
	oaat ^= oaat >> 11
	oaat += oaat << 15
	if got := hashkit.OneAtATime(key); got != oaat {
		t.Errorf("one_at_a_time = %d, want %d", got, oaat)
	}
	h := uint32(0x84222325)
	for _, b := range key {
		h ^= 0xffffff00 | uint32(b)
		if b < 0x80 {
			h ^= 0xffffff00
		}
		h *= 0x1b3
	}
	if got := hashkit.FNV1a_64(key); got != h {
		t.Errorf("fnv1a_64 = %d, want %d", got, h)
	}
}

func TestNoAllocs(t *testing.T) {
	key := []byte(strings.Repeat("long-key-\xe9", 30))
	for _, name := range hashkit.Names() {
		f, _ := hashkit.Parse(name)
		if n := testing.AllocsPerRun(100, func() { sink += f(key) }); n != 0 {
			t.Errorf("%s allocates %v times per hash", name, n)
		}
	}
}

func FuzzHashes(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte("apple"))
	f.Add([]byte("\xe9\x80\xff"))
	f.Add([]byte("0123456789abcdef0123456789"))
	f.Fuzz(func(t *testing.T, key []byte) {
		orig := string(key)
		for _, name := range hashkit.Names() {
			fn, _ := hashkit.Parse(name)
			a, b := fn(key), fn(key)
			if a != b {
				t.Fatalf("%s not deterministic", name)
			}
		}
		if string(key) != orig {
			t.Fatal("a hash modified its key")
		}
	})
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "md5", "FNV1A_64", "memcached_hash_crc", "x\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		fn, err := hashkit.Parse(name)
		if (err == nil) == (fn == nil) {
			t.Fatalf("Parse(%q) = %v, %v", name, fn != nil, err)
		}
		if err != nil && !errors.Is(err, hashkit.ErrUnknown) {
			t.Fatalf("Parse(%q) error %v", name, err)
		}
	})
}

func BenchmarkHashes(b *testing.B) {
	for _, size := range []int{8, 32, 250} {
		key := []byte(strings.Repeat("k", size))
		for _, name := range []string{"one_at_a_time", "md5", "crc32a", "crc16", "fnv1a_64", "fnv1_64", "hsieh", "murmur", "murmur3", "jenkins"} {
			f, _ := hashkit.Parse(name)
			b.Run(name+"/"+strconv.Itoa(size), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(size))
				for b.Loop() {
					sink += f(key)
				}
			})
		}
	}
}
