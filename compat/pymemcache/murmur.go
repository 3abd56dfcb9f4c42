package pymemcache

import "math/bits"

// murmur is MurmurHash3_x86_32 with seed 0 fed one byte at a time, so that
// the hashed text ("node-key" with the key transformed) never has to be
// built in memory.
type murmur struct {
	h     uint32
	k     uint32 // pending tail bytes, little-endian
	ntail uint
	n     uint32
}

const (
	murmurC1 = 0xcc9e2d51
	murmurC2 = 0x1b873593
)

func (m *murmur) write(b byte) {
	m.k |= uint32(b) << (8 * m.ntail)
	m.n++
	if m.ntail++; m.ntail < 4 {
		return
	}
	k := m.k * murmurC1
	k = bits.RotateLeft32(k, 15) * murmurC2
	m.h ^= k
	m.h = bits.RotateLeft32(m.h, 13)*5 + 0xe6546b64
	m.k, m.ntail = 0, 0
}

func (m *murmur) writeASCII(s string) {
	for i := 0; i < len(s); i++ {
		m.write(s[i])
	}
}

func (m *murmur) sum() uint32 {
	h := m.h
	if m.ntail > 0 {
		k := m.k * murmurC1
		k = bits.RotateLeft32(k, 15) * murmurC2
		h ^= k
	}
	h ^= m.n
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

const hexDigits = "0123456789abcdef"

// writeRepr feeds Python 3's repr of the bytes b: b'...' (or b"..." when b
// holds a single quote and no double quote), escaping the quote, backslash,
// tab, newline and carriage return, and every other byte below 0x20 or
// from 0x7f as \xNN.
func (m *murmur) writeRepr(b []byte) {
	quote := byte('\'')
	if containsByte(b, '\'') && !containsByte(b, '"') {
		quote = '"'
	}
	m.write('b')
	m.write(quote)
	for _, c := range b {
		switch {
		case c == quote || c == '\\':
			m.write('\\')
			m.write(c)
		case c == '\t':
			m.writeASCII(`\t`)
		case c == '\n':
			m.writeASCII(`\n`)
		case c == '\r':
			m.writeASCII(`\r`)
		case c < ' ' || c >= 0x7f:
			m.writeASCII(`\x`)
			m.write(hexDigits[c>>4])
			m.write(hexDigits[c&15])
		default:
			m.write(c)
		}
	}
	m.write(quote)
}

func containsByte(b []byte, c byte) bool {
	for _, x := range b {
		if x == c {
			return true
		}
	}
	return false
}
