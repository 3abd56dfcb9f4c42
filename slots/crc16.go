package slots

import "github.com/kolco-dev/kolco/internal/crc16"

// CRC16 returns the CRC-16/XMODEM checksum of s ("123456789" gives 0x31C3),
// the checksum Redis Cluster uses for key slots.
func CRC16(s string) uint16 { return crc16.XMODEM(s) }

// HashTag returns the part of key that Redis Cluster hashes: the text
// between the first '{' and the first '}' after it when that text is not
// empty, and otherwise the whole key. So "{user1000}.following" hashes
// "user1000", "foo{}{bar}" and "{}" hash themselves, "{{}}" hashes "{" and
// "foo{{bar}}zap" hashes "{bar". The result shares key's memory.
func HashTag(key string) string {
	for i := 0; i < len(key); i++ {
		if key[i] != '{' {
			continue
		}
		for j := i + 1; j < len(key); j++ {
			if key[j] == '}' {
				if j == i+1 {
					return key
				}
				return key[i+1 : j]
			}
		}
		return key
	}
	return key
}

// KeySlot returns the Redis Cluster slot of key among [DefaultCount] slots,
// as CLUSTER KEYSLOT reports it: CRC16(HashTag(key)) mod 16384.
func KeySlot(key string) int {
	return int(CRC16(HashTag(key)) & (DefaultCount - 1))
}
