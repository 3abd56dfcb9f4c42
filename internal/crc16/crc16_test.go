package crc16

import "testing"

// TestTableMatchesPolynomial recomputes every entry bit by bit from the
// polynomial, and checks the catalogue's check value.
func TestTableMatchesPolynomial(t *testing.T) {
	for i := range 256 {
		crc := uint16(i) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
		if Entry(byte(i)) != crc {
			t.Fatalf("Entry(%d) = %#04x, the polynomial gives %#04x", i, Entry(byte(i)), crc)
		}
	}
	if got := XMODEM("123456789"); got != 0x31C3 {
		t.Errorf("XMODEM(123456789) = %#04x, want 0x31C3", got)
	}
}
