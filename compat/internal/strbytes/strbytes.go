//go:build !purego

// Package strbytes views a string as bytes without copying, so that the
// compat placements can offer Locate(string) on top of Index([]byte) without
// an allocation per lookup.
package strbytes

import "unsafe"

// Of returns the bytes of s without copying. The caller must not modify
// them: they are the string's own memory.
func Of(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
