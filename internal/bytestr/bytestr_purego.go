//go:build purego

package bytestr

// Copies reports whether [Of] and [String] copy: true in the purego build,
// where lookups through them allocate for long keys.
const Copies = true

// Of returns a copy of the bytes of s: the portable twin of the zero-copy
// version, selected with the purego build tag.
func Of(s string) []byte { return []byte(s) }

// String returns a copy of b as a string: the portable twin of the
// zero-copy version.
func String(b []byte) string { return string(b) }

// Join returns prefix+s, a new string; buf is not used.
func Join(_ []byte, prefix, s string) string { return prefix + s }
