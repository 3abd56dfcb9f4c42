//go:build !purego

package keyhash

import "unsafe"

// bytesOf returns the bytes of s without copying. The callers only read
// them (md5.Sum, crc32), so the string's immutability is kept; copying would
// cost an allocation per hash for keys longer than the compiler's stack buffer.
func bytesOf(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
