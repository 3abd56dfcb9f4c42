// Package keyhash provides stable 64-bit hashes of keys, chosen by name.
//
// A placement is only useful if every process that computes it agrees, so
// every function here is deterministic across processes, machines and
// releases: golden vectors in the tests pin each value. Nothing here is
// seeded per process (Go's hash/maphash would be).
//
// The functions:
//
//   - xxh3: XXH3-64 (Yann Collet, 2019), seed 0. The default: fast and well mixed.
//   - xxh64: XXH64, seed 0.
//   - murmur3: the first 64 bits (h1) of MurmurHash3_x64_128, seed 0.
//   - fnv1a: 64-bit FNV-1a.
//   - crc32: CRC-32 (IEEE), zero-extended; only 2^32 distinct values.
//   - md5: the first 8 bytes of the MD5 digest read big-endian, the hash of
//     the Python ring of the article this module reproduces (its
//     ring_hash; see ring.ArticleConfig).
//
// # Weak hashes
//
// xxh3, xxh64, murmur3 and md5 are mixed: every output bit depends on every
// bit of the key, so any part of the value (its top bits for a
// multiply-shift reduction, its order for a ring) is uniform. fnv1a and
// crc32 are not ([Mixed] says so): the last bytes of a key reach only the
// low and middle bits of fnv1a, so keys and labels that differ at the end
// ("node-1#7", "node-1#8") crowd together, and crc32 has 32 bits and is
// linear. An algorithm that needs mixed bits takes [Finalized] of the hash
// it is given, which leaves a mixed hash as it is and passes a weak one
// through MurmurHash3's fmix64, a bijection: keys the hash tells apart stay
// apart, and every bit spreads over all 64. Each algorithm's documentation
// says where it does so.
package keyhash

import (
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"reflect"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/twmb/murmur3"
	"github.com/zeebo/xxh3"

	"github.com/kolco-dev/kolco/internal/bytestr"
	"github.com/kolco-dev/kolco/internal/mix"
)

// ErrUnknown is returned by [Parse] for a name it does not know.
var ErrUnknown = errors.New("keyhash: unknown hash")

// Func hashes a key to 64 bits. A Func never retains or modifies its
// argument and does not allocate (in the default build; the purego build
// copies the key for md5 and crc32).
type Func func(key string) uint64

// Default is the name of the default hash.
const Default = "xxh3"

var byName = map[string]Func{
	"xxh3":    XXH3,
	"xxh64":   XXH64,
	"murmur3": Murmur3,
	"fnv1a":   FNV1a,
	"crc32":   CRC32,
	"md5":     MD5,
}

// Names returns the names [Parse] accepts, default first.
func Names() []string {
	return []string{"xxh3", "xxh64", "murmur3", "fnv1a", "crc32", "md5"}
}

// Name returns the name under which [Parse] knows f, and false for a
// function this package does not define (a closure, another package's
// function, nil): the stable way to write down which hash a placement
// uses, where a function value names nothing beyond one process.
func Name(f Func) (string, bool) {
	if f == nil {
		return "", false
	}
	p := reflect.ValueOf(f).Pointer()
	for _, name := range Names() {
		if reflect.ValueOf(byName[name]).Pointer() == p {
			return name, true
		}
	}
	return "", false
}

// Mixed reports whether every bit of f's value depends on every bit of the
// key: true for xxh3, xxh64, murmur3 and md5, false for fnv1a and crc32
// (see the package documentation). A function this package does not define
// is taken as mixed: its choice is the caller's.
func Mixed(f Func) bool {
	name, _ := Name(f)
	return name != "fnv1a" && name != "crc32"
}

// Finalized returns f when it is [Mixed], else a hash that applies
// MurmurHash3's fmix64 to f's value. fmix64 is a bijection of 64-bit
// words, so the result tells apart exactly the keys that f tells apart.
func Finalized(f Func) Func {
	switch name, _ := Name(f); name {
	case "fnv1a":
		return fnv1aMixed
	case "crc32":
		return crc32Mixed
	}
	return f
}

func fnv1aMixed(key string) uint64 { return mix.Fmix64(FNV1a(key)) }

func crc32Mixed(key string) uint64 { return mix.Fmix64(CRC32(key)) }

// Parse returns the hash with the given name (case-insensitive; the empty
// name means [Default]). The error wraps [ErrUnknown].
func Parse(name string) (Func, error) {
	if name == "" {
		name = Default
	}
	if f, ok := byName[strings.ToLower(name)]; ok {
		return f, nil
	}
	return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknown, name, strings.Join(Names(), ", "))
}

// XXH3 returns XXH3-64 of key with seed 0.
func XXH3(key string) uint64 { return xxh3.HashString(key) }

// XXH64 returns XXH64 of key with seed 0.
func XXH64(key string) uint64 { return xxhash.Sum64String(key) }

// Murmur3 returns the first 64 bits (h1) of MurmurHash3_x64_128 of key, seed 0.
func Murmur3(key string) uint64 {
	h1, _ := murmur3.StringSum128(key)
	return h1
}

// FNV1a returns the 64-bit FNV-1a hash of key. It is written out rather than
// taken from hash/fnv because that package's hasher escapes to the heap.
func FNV1a(key string) uint64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	for i := 0; i < len(key); i++ {
		h ^= uint64(key[i])
		h *= prime
	}
	return h
}

// CRC32 returns the CRC-32 (IEEE) checksum of key, zero-extended to 64 bits.
func CRC32(key string) uint64 { return uint64(crc32.ChecksumIEEE(bytestr.Of(key))) }

// MD5 returns the first 8 bytes of the MD5 digest of key read big-endian.
func MD5(key string) uint64 {
	d := md5.Sum(bytestr.Of(key))
	return binary.BigEndian.Uint64(d[:8])
}
