package cassandra

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/kolco-dev/kolco/internal/mix"

	"github.com/kolco-dev/kolco"
)

const (
	c1 = 0x87c37b91114253d5
	c2 = 0x4cf5ad432745937f
)

// Token returns the Murmur3Partitioner token of a serialized partition key.
func Token(key []byte) int64 {
	if len(key) == 0 {
		return math.MinInt64
	}
	h1 := h1Of(key)
	if int64(h1) == math.MinInt64 {
		return math.MaxInt64
	}
	return int64(h1)
}

// h1Of is the first half of Cassandra's MurmurHash3_x64_128, seed 0.
func h1Of(key []byte) uint64 {
	var h1, h2 uint64
	n := len(key)
	body := n / 16 * 16
	for i := 0; i < body; i += 16 {
		k1 := binary.LittleEndian.Uint64(key[i:])
		k2 := binary.LittleEndian.Uint64(key[i+8:])
		h1 ^= mixK1(k1)
		h1 = bits.RotateLeft64(h1, 27) + h2
		h1 = h1*5 + 0x52dce729
		h2 ^= mixK2(k2)
		h2 = bits.RotateLeft64(h2, 31) + h1
		h2 = h2*5 + 0x38495ab5
	}
	var k1, k2 uint64
	tail := key[body:]
	for i := len(tail) - 1; i >= 0; i-- {
		// Java widens the signed byte: 0x80..0xff fill the bits above.
		b := uint64(int64(int8(tail[i])))
		if i >= 8 {
			k2 ^= b << (8 * (i - 8))
		} else {
			k1 ^= b << (8 * i)
		}
	}
	if len(tail) > 8 {
		h2 ^= mixK2(k2)
	}
	if len(tail) > 0 {
		h1 ^= mixK1(k1)
	}
	h1 ^= uint64(n)
	h2 ^= uint64(n)
	h1 += h2
	h2 += h1
	h1 = mix.Fmix64(h1)
	h2 = mix.Fmix64(h2)
	return h1 + h2
}

func mixK1(k uint64) uint64 { return bits.RotateLeft64(k*c1, 31) * c2 }
func mixK2(k uint64) uint64 { return bits.RotateLeft64(k*c2, 33) * c1 }

// CompositeKey appends the serialized form of a composite partition key to
// dst: for each component a 2-byte big-endian length, the bytes and a zero
// byte. A single-column key is its bytes alone. The error wraps
// [kolco.ErrBadConfig] for a component longer than 65535 bytes.
func CompositeKey(dst []byte, components ...[]byte) ([]byte, error) {
	for _, c := range components {
		if len(c) > math.MaxUint16 {
			return dst, fmt.Errorf("%w: cassandra: key component of %d bytes", kolco.ErrBadConfig, len(c))
		}
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(c)))
		dst = append(append(dst, c...), 0)
	}
	return dst, nil
}
