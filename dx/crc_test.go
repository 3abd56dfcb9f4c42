package dx

import (
	"encoding/binary"
	"hash/crc32"
	"testing"
)

// TestCRC32C checks the software step against hash/crc32's CRC-32C, from
// which it differs only by the inversions a message CRC adds before and
// after.
func TestCRC32C(t *testing.T) {
	tab := crc32.MakeTable(crc32.Castagnoli)
	x := uint64(0x9e3779b97f4a7c15)
	for i := range 10000 {
		crc := uint32(x>>7) ^ uint32(i)
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], x)
		if got, want := crc32c(crc, x), ^crc32.Update(^crc, tab, b[:]); got != want {
			t.Fatalf("crc32c(%#x, %#x) = %#x, want %#x", crc, x, got, want)
		}
		x = x*6364136223846793005 + 1442695040888963407
	}
}
