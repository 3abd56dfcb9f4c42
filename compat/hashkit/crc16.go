package hashkit

import "github.com/kolco-dev/kolco/internal/crc16"

// CRC16 is twemproxy's "crc16": CRC-16/XMODEM (polynomial 0x1021, initial
// value 0, no reflection) except that the 32-bit register is never masked to
// 16 bits, so bits above 15 accumulate: the result is not a 16-bit CRC.
func CRC16(key []byte) uint32 {
	var crc uint32
	for _, b := range key {
		crc = (crc << 8) ^ uint32(crc16.Entry(byte(crc>>8)^b))
	}
	return crc
}
