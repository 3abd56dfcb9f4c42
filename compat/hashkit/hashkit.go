package hashkit

import (
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"strings"
)

// ErrUnknown is returned by [Parse] for a name it does not know.
var ErrUnknown = errors.New("hashkit: unknown hash")

// Func hashes a key to 32 bits. A Func never retains or modifies its
// argument and does not allocate.
type Func func(key []byte) uint32

// names lists every accepted name with its function, in the order [Names]
// reports them. "default" is libmemcached's MEMCACHED_HASH_DEFAULT.
var names = []struct {
	name string
	f    Func
}{
	{"one_at_a_time", OneAtATime},
	{"default", OneAtATime},
	{"md5", MD5},
	{"crc", CRC},
	{"crc32", CRC},
	{"crc32a", CRC32a},
	{"crc16", CRC16},
	{"fnv1_32", FNV1_32},
	{"fnv1a_32", FNV1a_32},
	{"fnv1_64", FNV1_64},
	{"fnv1a_64", FNV1a_64},
	{"hsieh", Hsieh},
	{"murmur", Murmur},
	{"murmur3", Murmur3},
	{"jenkins", Jenkins},
}

// Names returns the names [Parse] accepts: twemproxy's (one_at_a_time, md5,
// crc16, crc32, crc32a, fnv1_64, fnv1a_64, fnv1_32, fnv1a_32, hsieh, murmur,
// jenkins) and libmemcached's (default, md5, crc, fnv1_64, fnv1a_64, fnv1_32,
// fnv1a_32, hsieh, murmur, murmur3, jenkins).
func Names() []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n.name
	}
	return out
}

// Parse returns the hash with the given name. Case is ignored, and so is a
// "MEMCACHED_HASH_" or "HASHKIT_HASH_" prefix, so that libmemcached's
// constant names are accepted too. The error wraps [ErrUnknown].
func Parse(name string) (Func, error) {
	n := strings.ToLower(name)
	n = strings.TrimPrefix(n, "memcached_hash_")
	n = strings.TrimPrefix(n, "hashkit_hash_")
	for _, e := range names {
		if e.name == n {
			return e.f, nil
		}
	}
	return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknown, name, strings.Join(Names(), ", "))
}

// sx widens a key byte the way a C signed char converts to uint32.
func sx(b byte) uint32 { return uint32(int32(int8(b))) }

// OneAtATime is Bob Jenkins' one-at-a-time hash over signed chars:
// libmemcached's default key hash and twemproxy's "one_at_a_time".
func OneAtATime(key []byte) uint32 {
	var h uint32
	for _, b := range key {
		h += sx(b)
		h += h << 10
		h ^= h >> 6
	}
	h += h << 3
	h ^= h >> 11
	h += h << 15
	return h
}

// MD5 returns bytes 0..3 of the MD5 digest of key read little-endian.
func MD5(key []byte) uint32 {
	d := md5.Sum(key)
	return binary.LittleEndian.Uint32(d[:4])
}

// MD5Points returns the four ketama points of s: digest bytes 4a..4a+3 read
// little-endian for a = 0..3.
func MD5Points(s []byte) [4]uint32 {
	d := md5.Sum(s)
	return [4]uint32{
		binary.LittleEndian.Uint32(d[0:4]),
		binary.LittleEndian.Uint32(d[4:8]),
		binary.LittleEndian.Uint32(d[8:12]),
		binary.LittleEndian.Uint32(d[12:16]),
	}
}

// KetamaPoints returns the number of weighted ketama points, a multiple of
// 4, that libmemcached and twemproxy give a server of weight w among n
// servers of total weight total. Every step is rounded to float32 as in
// their C, libmemcached's
// floor((float)(pct*160/4*(float)n + 0.0000000001F))*4 and twemproxy's
// floorf((float)(pct*160/4*(float)n + 0.0000000001))*4, whose only
// difference, adding the 1e-10 in float or in double, never changes the
// floor: a float32 at or above 1 is never within 1e-10 below an integer.
// Equal weights do not always give 160 each: 25 servers give 156. The
// explicit conversions keep the compiler from fusing operations.
func KetamaPoints(w, total uint64, n int) int {
	pct := float32(w) / float32(total)
	x := float32(pct * 160)
	x = float32(x / 4)
	x = float32(x * float32(n))
	x = float32(x + float32(0.0000000001))
	return int(math.Floor(float64(x)) * 4)
}

// CRC is libmemcached's "crc" and twemproxy's "crc32": bits 16..30 of the
// CRC-32 (IEEE) of key.
func CRC(key []byte) uint32 { return (crc32.ChecksumIEEE(key) >> 16) & 0x7fff }

// CRC32a is twemproxy's "crc32a": the plain CRC-32 (IEEE) of key.
func CRC32a(key []byte) uint32 { return crc32.ChecksumIEEE(key) }

const (
	fnv32Init  = 2166136261
	fnv32Prime = 16777619
	fnv64Init  = 0xcbf29ce484222325
	fnv64Prime = 0x100000001b3
)

// FNV1_32 is 32-bit FNV-1 over signed chars.
func FNV1_32(key []byte) uint32 {
	h := uint32(fnv32Init)
	for _, b := range key {
		h *= fnv32Prime
		h ^= sx(b)
	}
	return h
}

// FNV1a_32 is 32-bit FNV-1a over signed chars.
func FNV1a_32(key []byte) uint32 {
	h := uint32(fnv32Init)
	for _, b := range key {
		h ^= sx(b)
		h *= fnv32Prime
	}
	return h
}

// FNV1_64 is 64-bit FNV-1 over sign-extended chars, truncated to the low 32
// bits.
func FNV1_64(key []byte) uint32 {
	h := uint64(fnv64Init)
	for _, b := range key {
		h *= fnv64Prime
		h ^= uint64(int64(int8(b)))
	}
	return uint32(h)
}

// FNV1a_64 is what libhashkit and twemproxy call "fnv1a_64": FNV-1a in 32-bit
// arithmetic with the low halves of the 64-bit offset basis and prime,
// over signed chars. It is twemproxy's default key hash.
func FNV1a_64(key []byte) uint32 {
	h := uint32(fnv64Init & 0xffffffff)
	for _, b := range key {
		h ^= sx(b)
		h *= fnv64Prime & 0xffffffff
	}
	return h
}
