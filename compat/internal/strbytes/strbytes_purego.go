//go:build purego

// Package strbytes views a string as bytes, so that the compat placements can
// offer Locate(string) on top of Index([]byte).
package strbytes

// Of returns a copy of the bytes of s: the portable twin of the zero-copy
// version, selected with the purego build tag. It allocates for long keys.
func Of(s string) []byte { return []byte(s) }
