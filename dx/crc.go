package dx

// The generator of DxHash's sequences is the CRC-32C (Castagnoli) step
// that the authors' code runs on the SSE 4.2 instruction crc32q: the
// register starts at a 32-bit value and takes in eight bytes, with none of
// the inversions a CRC of a message adds. This is the same step in
// software, eight table look-ups (slicing by 8); hash/crc32 would compute
// it with the instruction, but through a function value that makes the
// eight bytes escape, and a lookup must not allocate. On amd64 the
// lookup's probe loop runs the instruction itself (probe_amd64.s); this
// step serves the other paths and processors.

// castagnoli is the reversed CRC-32C polynomial.
const castagnoli = 0x82f63b78

// crcTable holds table k of slicing by 8: the CRC of a byte followed by k
// zero bytes. It is filled once and only read.
var crcTable = func() (t [8][256]uint32) {
	for i := range 256 {
		c := uint32(i)
		for range 8 {
			if c&1 == 1 {
				c = c>>1 ^ castagnoli
			} else {
				c >>= 1
			}
		}
		t[0][i] = c
	}
	for i := range 256 {
		for k := 1; k < 8; k++ {
			t[k][i] = t[k-1][i]>>8 ^ t[0][t[k-1][i]&0xff]
		}
	}
	return t
}()

// crc32c returns the register crc32q leaves after taking in data, least
// significant byte first, from crc.
func crc32c(crc uint32, data uint64) uint32 {
	x := data ^ uint64(crc)
	t := &crcTable
	return t[7][x&0xff] ^ t[6][x>>8&0xff] ^ t[5][x>>16&0xff] ^ t[4][x>>24&0xff] ^
		t[3][x>>32&0xff] ^ t[2][x>>40&0xff] ^ t[1][x>>48&0xff] ^ t[0][x>>56]
}
