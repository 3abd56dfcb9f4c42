//go:build !purego

// Package strbytes views a string as bytes and bytes as a string without
// copying, so that the compat placements can offer Locate(string) on top of
// Index([]byte), and the reverse, without an allocation per lookup.
package strbytes

import "unsafe"

// Copies reports whether [Of] and [String] copy: false in this build, so
// lookups through them do not allocate.
const Copies = false

// Of returns the bytes of s without copying. The caller must not modify
// them: they are the string's own memory.
func Of(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// String returns b as a string without copying. The caller must not modify
// b while the string is in use.
func String(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}
