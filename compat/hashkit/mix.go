package hashkit

import (
	"encoding/binary"
	"math/bits"
)

// Hsieh is Paul Hsieh's SuperFastHash as twemproxy has it: the three-byte
// tail widens its last byte as a signed char, the one-byte tail does not.
// Unlike Hsieh's original, the state starts at 0, not at the length. The
// empty key hashes to 0.
func Hsieh(key []byte) uint32 {
	if len(key) == 0 {
		return 0
	}
	var h uint32
	rem := len(key) & 3
	for len(key) >= 4 {
		h += uint32(binary.LittleEndian.Uint16(key))
		tmp := uint32(binary.LittleEndian.Uint16(key[2:]))<<11 ^ h
		h = h<<16 ^ tmp
		key = key[4:]
		h += h >> 11
	}
	switch rem {
	case 3:
		h += uint32(binary.LittleEndian.Uint16(key))
		h ^= h << 16
		h ^= sx(key[2]) << 18
		h += h >> 11
	case 2:
		h += uint32(binary.LittleEndian.Uint16(key))
		h ^= h << 11
		h += h >> 17
	case 1:
		h += uint32(key[0])
		h ^= h << 10
		h += h >> 1
	}
	h ^= h << 3
	h += h >> 5
	h ^= h << 4
	h += h >> 17
	h ^= h << 25
	h += h >> 6
	return h
}

// Murmur is MurmurHash2 (32-bit) with seed 0xdeadbeef*len(key), as
// libhashkit's and twemproxy's "murmur".
func Murmur(key []byte) uint32 {
	const m = 0x5bd1e995
	n := uint32(len(key))
	h := (0xdeadbeef * n) ^ n
	for len(key) >= 4 {
		k := binary.LittleEndian.Uint32(key)
		k *= m
		k ^= k >> 24
		k *= m
		h *= m
		h ^= k
		key = key[4:]
	}
	switch len(key) {
	case 3:
		h ^= uint32(key[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(key[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(key[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return h
}

// Murmur3 is MurmurHash3_x86_32 with seed 0xdeadbeef*len(key), as
// libhashkit's "murmur3" (twemproxy has no murmur3).
func Murmur3(key []byte) uint32 {
	return Murmur3Seed(key, 0xdeadbeef*uint32(len(key)))
}

// Murmur3Seed is MurmurHash3_x86_32 of key with the given seed.
func Murmur3Seed(key []byte, seed uint32) uint32 {
	const (
		c1 = 0xcc9e2d51
		c2 = 0x1b873593
	)
	h := seed
	n := uint32(len(key))
	for len(key) >= 4 {
		k := binary.LittleEndian.Uint32(key)
		k *= c1
		k = bits.RotateLeft32(k, 15)
		k *= c2
		h ^= k
		h = bits.RotateLeft32(h, 13)
		h = h*5 + 0xe6546b64
		key = key[4:]
	}
	var k uint32
	switch len(key) {
	case 3:
		k ^= uint32(key[2]) << 16
		fallthrough
	case 2:
		k ^= uint32(key[1]) << 8
		fallthrough
	case 1:
		k ^= uint32(key[0])
		k *= c1
		k = bits.RotateLeft32(k, 15)
		k *= c2
		h ^= k
	}
	h ^= n
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// Jenkins is Bob Jenkins' lookup3 hashlittle with initval 13, returning c,
// as libhashkit's and twemproxy's "jenkins".
func Jenkins(key []byte) uint32 {
	a := 0xdeadbeef + uint32(len(key)) + 13
	b, c := a, a
	for len(key) > 12 {
		a += binary.LittleEndian.Uint32(key)
		b += binary.LittleEndian.Uint32(key[4:])
		c += binary.LittleEndian.Uint32(key[8:])
		a, b, c = jenkinsMix(a, b, c)
		key = key[12:]
	}
	if len(key) == 0 {
		return c
	}
	// The last block, zero-padded: hashlittle's masked word reads and its
	// byte-by-byte fallback agree with this.
	var tail [12]byte
	copy(tail[:], key)
	a += binary.LittleEndian.Uint32(tail[0:])
	b += binary.LittleEndian.Uint32(tail[4:])
	c += binary.LittleEndian.Uint32(tail[8:])
	return jenkinsFinal(a, b, c)
}

func jenkinsMix(a, b, c uint32) (uint32, uint32, uint32) {
	a -= c
	a ^= bits.RotateLeft32(c, 4)
	c += b
	b -= a
	b ^= bits.RotateLeft32(a, 6)
	a += c
	c -= b
	c ^= bits.RotateLeft32(b, 8)
	b += a
	a -= c
	a ^= bits.RotateLeft32(c, 16)
	c += b
	b -= a
	b ^= bits.RotateLeft32(a, 19)
	a += c
	c -= b
	c ^= bits.RotateLeft32(b, 4)
	b += a
	return a, b, c
}

func jenkinsFinal(a, b, c uint32) uint32 {
	c ^= b
	c -= bits.RotateLeft32(b, 14)
	a ^= c
	a -= bits.RotateLeft32(c, 11)
	b ^= a
	b -= bits.RotateLeft32(a, 25)
	c ^= b
	c -= bits.RotateLeft32(b, 16)
	a ^= c
	a -= bits.RotateLeft32(c, 4)
	b ^= a
	b -= bits.RotateLeft32(a, 14)
	c ^= b
	c -= bits.RotateLeft32(b, 24)
	return c
}
