//go:build !purego

package ring

import "unsafe"

// stringOf returns b as a string without copying. The hash functions only
// read their argument and never keep it, and b is not modified until the
// hash returns, so the string's immutability holds; copying would cost one
// allocation per point when a ring is built.
func stringOf(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
