package keyhash_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/keyhash"
)

// Golden vectors, each computed outside Go so that a value can never change
// silently between releases: md5, crc32 and fnv1a with Python's hashlib, zlib
// and a four-line FNV loop; xxh3 and xxh64 with xxhsum 0.8.1 (-H3, -H64);
// murmur3 with a straightforward Python transcription of MurmurHash3_x64_128.
var golden = []struct {
	key                                string
	xxh3, xxh64, murmur3, fnv1a, crc32 uint64
	md5                                uint64
}{
	{"", 0x2d06800538d394c2, 0xef46db3751d8e999, 0, 14695981039346656037, 0, 15284527576400310788},
	{"a", 0xe6c632b61e964e1f, 0xd24ec4f1a98c6e5b, 0x85555565f6597889, 12638187200555641996, 3904355907, 919145239626757800},
	{"user:42", 0x9fc1e605fa7174aa, 0xdc1fea7da8d2d1c2, 0xcd01081bf0aa3a68, 7788164824035369410, 1684999558, 6258559928114592308},
	{"cache-a#0", 0xa4686ece224f0b6c, 0x1222d129411d4d23, 0x802013795d2756d8, 12781974282469868776, 330349473, 3717749292897089810},
	{"été", 0x4527085b35eb8255, 0xec4a491a57c3c9b1, 0x53bf5f6c9b9d9a14, 43504438999324759, 1154575572, 16046160676943733976},
	{strings.Repeat("k", 100), 0xe57acbcb82758df2, 0xbf74f9bfd1d88091, 0x2c4faac627fea950, 15617031896178284281, 615785828, 2032909989586772213},
}

func TestGolden(t *testing.T) {
	for _, g := range golden {
		name := g.key
		if len(name) > 12 {
			name = name[:12] + "..."
		}
		t.Run(name, func(t *testing.T) {
			for _, c := range []struct {
				hash string
				want uint64
			}{{"xxh3", g.xxh3}, {"xxh64", g.xxh64}, {"murmur3", g.murmur3}, {"fnv1a", g.fnv1a}, {"crc32", g.crc32}, {"md5", g.md5}} {
				f, err := keyhash.Parse(c.hash)
				if err != nil {
					t.Fatal(err)
				}
				if got := f(g.key); got != c.want {
					t.Errorf("%s(%q) = %#x, want %#x", c.hash, g.key, got, c.want)
				}
			}
		})
	}
}

func TestMurmur3Published(t *testing.T) {
	const fox = "The quick brown fox jumps over the lazy dog"
	if got, want := keyhash.Murmur3(fox), uint64(0xe34bbc7bbc071b6c); got != want {
		t.Errorf("Murmur3(fox) = %#x, want %#x", got, want)
	}
}

func TestParse(t *testing.T) {
	for _, name := range keyhash.Names() {
		if _, err := keyhash.Parse(name); err != nil {
			t.Errorf("Parse(%q): %v", name, err)
		}
		if _, err := keyhash.Parse(strings.ToUpper(name)); err != nil {
			t.Errorf("Parse(%q): %v", strings.ToUpper(name), err)
		}
	}
	def, err := keyhash.Parse("")
	if err != nil || def("x") != keyhash.XXH3("x") {
		t.Errorf("Parse(\"\") is not the default xxh3 (err %v)", err)
	}
	for _, bad := range []string{"sha1", "md-5", " xxh3"} {
		if _, err := keyhash.Parse(bad); !errors.Is(err, keyhash.ErrUnknown) {
			t.Errorf("Parse(%q) error = %v, want ErrUnknown", bad, err)
		}
	}
}

var sink uint64

func BenchmarkHash(b *testing.B) {
	for _, size := range []int{8, 32, 256} {
		key := strings.Repeat("k", size)
		for _, name := range keyhash.Names() {
			f, _ := keyhash.Parse(name)
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

func TestNameRecoversParse(t *testing.T) {
	for _, name := range keyhash.Names() {
		f, err := keyhash.Parse(name)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := keyhash.Name(f); !ok || got != name {
			t.Errorf("Name(Parse(%q)) = %q, %v", name, got, ok)
		}
	}
	closure := func(k string) uint64 { return keyhash.XXH3(k) }
	for _, f := range []keyhash.Func{nil, closure} {
		if got, ok := keyhash.Name(f); ok || got != "" {
			t.Errorf("Name of a function not in keyhash = %q, %v", got, ok)
		}
	}
}

func TestFinalized(t *testing.T) {
	for _, name := range keyhash.Names() {
		f, _ := keyhash.Parse(name)
		g := keyhash.Finalized(f)
		weak := name == "fnv1a" || name == "crc32"
		if keyhash.Mixed(f) == weak {
			t.Errorf("Mixed(%s) = %v", name, !weak)
		}
		for _, k := range []string{"", "a", "node-1#7", "user:42"} {
			want := f(k)
			if weak {
				want = fmix(want)
			}
			if got := g(k); got != want {
				t.Errorf("Finalized(%s)(%q) = %#x, want %#x", name, k, got, want)
			}
		}
	}
	own := func(k string) uint64 { return uint64(len(k)) }
	if !keyhash.Mixed(own) || keyhash.Finalized(own)("abc") != 3 {
		t.Error("a function not in keyhash is not taken as given")
	}
}

// fmix is MurmurHash3's 64-bit finalizer as published by Austin Appleby.
func fmix(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}
