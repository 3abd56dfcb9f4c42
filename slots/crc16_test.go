package slots

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// crc16Bitwise is CRC-16/XMODEM computed bit by bit, the textbook form, as
// an independent check of the table.
func crc16Bitwise(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// hashTagRef is the hash-tag rule written with strings.Index, as the Redis
// Cluster specification states it.
func hashTagRef(key string) string {
	open := strings.Index(key, "{")
	if open < 0 {
		return key
	}
	end := strings.Index(key[open+1:], "}")
	if end <= 0 {
		return key
	}
	return key[open+1 : open+1+end]
}

func TestCRC16PublishedVector(t *testing.T) {
	// The check value of CRC-16/XMODEM, also quoted in the Redis Cluster
	// specification.
	if got := CRC16("123456789"); got != 0x31C3 {
		t.Errorf("CRC16(123456789) = %#04x, want 0x31c3", got)
	}
	if got := CRC16(""); got != 0 {
		t.Errorf("CRC16(\"\") = %#04x, want 0", got)
	}
}

func TestCRC16MatchesBitwise(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := make([]byte, r.IntN(64))
		for i := range b {
			b[i] = byte(r.UintN(256))
		}
		if got, want := CRC16(string(b)), crc16Bitwise(string(b)); got != want {
			t.Fatalf("CRC16(%q) = %#04x, bitwise %#04x", b, got, want)
		}
	}
}

func TestHashTag(t *testing.T) {
	cases := []struct{ key, want string }{
		{"", ""},
		{"foo", "foo"},
		{"{user1000}.following", "user1000"},
		{"foo{bar}zap", "bar"},
		{"{}", "{}"},
		{"foo{}{bar}", "foo{}{bar}"},
		{"{{}}", "{"},
		{"foo{{bar}}zap", "{bar"},
		{"foo{bar}{zap}", "bar"},
		{"{", "{"},
		{"}{", "}{"},
		{"foo}{bar}", "bar"},
		{"foo{bar", "foo{bar"},
	}
	for _, c := range cases {
		if got := HashTag(c.key); got != c.want {
			t.Errorf("HashTag(%q) = %q, want %q", c.key, got, c.want)
		}
		if got := HashTag(c.key); got != hashTagRef(c.key) {
			t.Errorf("HashTag(%q) = %q, reference %q", c.key, got, hashTagRef(c.key))
		}
	}
}

func TestHashTagMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const alphabet = "{}ab"
	for range 5000 {
		b := make([]byte, r.IntN(10))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		if got, want := HashTag(string(b)), hashTagRef(string(b)); got != want {
			t.Fatalf("HashTag(%q) = %q, reference %q", b, got, want)
		}
	}
}

func TestKeySlotKnown(t *testing.T) {
	// 0x31C3 & 16383 = 12739; tagged keys share the slot of their tag.
	if got := KeySlot("123456789"); got != 12739 {
		t.Errorf("KeySlot(123456789) = %d, want 12739", got)
	}
	if KeySlot("{123456789}.a") != KeySlot("123456789") || KeySlot("x{123456789}") != 12739 {
		t.Error("keys with tag 123456789 are not in the tag's slot")
	}
}
