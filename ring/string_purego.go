//go:build purego

package ring

// stringOf returns a copy of b: the portable twin of the zero-copy version,
// selected with the purego build tag.
func stringOf(b []byte) string { return string(b) }
