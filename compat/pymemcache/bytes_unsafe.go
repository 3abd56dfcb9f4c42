//go:build !purego

package pymemcache

import "unsafe"

// bytesOf returns the bytes of s without copying, so that Locate(string)
// costs no allocation. The hashes only read them.
func bytesOf(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
