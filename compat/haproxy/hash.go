package haproxy

import (
	"fmt"
	"hash/crc32"
	"strings"

	"github.com/kolco-dev/kolco"
)

// Func is a HAProxy key hash function.
type Func uint8

// The hash functions of `hash-type ... <function>`.
const (
	SDBM Func = iota
	DJB2
	WT6
	CRC32
)

var funcNames = [...]string{"sdbm", "djb2", "wt6", "crc32"}

// String returns the function's name as written in a HAProxy configuration.
func (f Func) String() string {
	if int(f) < len(funcNames) {
		return funcNames[f]
	}
	return fmt.Sprintf("Func(%d)", uint8(f))
}

// Type is the kind of hash table, `hash-type consistent` or `map-based`.
type Type uint8

// The hash types.
const (
	MapBased Type = iota // HAProxy's default
	Consistent
)

// String returns the type as written in a HAProxy configuration.
func (t Type) String() string {
	if t == Consistent {
		return "consistent"
	}
	return "map-based"
}

// HashType is a `hash-type` setting. The zero value is HAProxy's default,
// map-based sdbm without avalanche.
type HashType struct {
	Type      Type
	Func      Func
	Avalanche bool
}

// String returns the setting as a hash-type line would write it.
func (h HashType) String() string {
	s := h.Type.String() + " " + h.Func.String()
	if h.Avalanche {
		s += " avalanche"
	}
	return s
}

// ParseHashType reads the arguments of a `hash-type` line, with or without
// the leading keyword: "consistent", "map-based djb2", "consistent wt6
// avalanche". As in HAProxy, a type without a function means sdbm, with
// avalanche for consistent only. The error wraps [kolco.ErrBadConfig].
func ParseHashType(s string) (HashType, error) {
	f := strings.Fields(s)
	if len(f) > 0 && f[0] == "hash-type" {
		f = f[1:]
	}
	var h HashType
	if len(f) == 0 || len(f) > 3 {
		return h, fmt.Errorf("%w: haproxy: hash-type %q", kolco.ErrBadConfig, s)
	}
	switch f[0] {
	case "consistent":
		h.Type = Consistent
	case "map-based":
	default:
		return h, fmt.Errorf("%w: haproxy: hash-type %q is neither consistent nor map-based", kolco.ErrBadConfig, f[0])
	}
	if len(f) == 1 {
		h.Avalanche = h.Type == Consistent
		return h, nil
	}
	found := false
	for i, n := range funcNames {
		if f[1] == n {
			h.Func, found = Func(i), true
		}
	}
	if !found {
		return h, fmt.Errorf("%w: haproxy: unknown hash function %q", kolco.ErrBadConfig, f[1])
	}
	if len(f) == 3 {
		if f[2] != "avalanche" {
			return h, fmt.Errorf("%w: haproxy: unknown hash modifier %q", kolco.ErrBadConfig, f[2])
		}
		h.Avalanche = true
	}
	return h, nil
}

// Hash returns the key hash HAProxy computes for key under this setting.
func (h HashType) Hash(key []byte) uint32 {
	var v uint32
	switch h.Func {
	case DJB2:
		v = 5381
		for _, c := range key {
			v = v*33 + uint32(c)
		}
	case WT6:
		v = wt6(key)
	case CRC32:
		v = crc32.ChecksumIEEE(key)
	default:
		for _, c := range key {
			v = uint32(c) + v<<6 + v<<16 - v
		}
	}
	if h.Avalanche {
		v = FullHash(v)
	}
	return v
}

// FullHash is HAProxy's full_hash: Bob Jenkins' 6-step integer hash
// multiplied by 3221225473. It is a bijection of uint32.
func FullHash(a uint32) uint32 {
	a = (a + 0x7ed55d16) + (a << 12)
	a = (a ^ 0xc761c23c) ^ (a >> 19)
	a = (a + 0x165667b1) + (a << 5)
	a = (a + 0xd3a2646c) ^ (a << 9)
	a = (a + 0xfd7046c5) + (a << 3)
	a = (a ^ 0xb55a4f09) ^ (a >> 16)
	return a * 3221225473
}

// wt6 is Willy Tarreau's hash with its data-dependent rotations.
func wt6(key []byte) uint32 {
	h0, h1 := uint32(0xa53c965a), uint32(0x5ca6953a)
	step0, step1 := uint32(6), uint32(18)
	for _, c := range key {
		t := uint32(c)
		h0 = ^(h0 ^ t)
		h1 = ^(h1 + t)
		t = h1<<step0 | h1>>(32-step0)
		h1 = h0<<step1 | h0>>(32-step1)
		h0 = t
		t = ((h0 >> 16) ^ h1) & 0xffff
		step0 = t & 0x1f
		step1 = t >> 11
	}
	return h0 ^ h1
}
