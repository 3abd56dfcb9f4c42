//go:build purego

// Package strbytes views a string as bytes and bytes as a string, so that the
// compat placements can offer Locate(string) on top of Index([]byte).
package strbytes

// Copies reports whether [Of] and [String] copy: true in the purego build,
// where lookups allocate for long keys.
const Copies = true

// Of returns a copy of the bytes of s: the portable twin of the zero-copy
// version, selected with the purego build tag. It allocates for long keys.
func Of(s string) []byte { return []byte(s) }

// String returns a copy of b as a string: the portable twin of the zero-copy
// version. It allocates for long keys.
func String(b []byte) string { return string(b) }
