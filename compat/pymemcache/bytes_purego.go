//go:build purego

package pymemcache

// bytesOf returns a copy of the bytes of s: the portable twin of the
// zero-copy version, selected with the purego build tag.
func bytesOf(s string) []byte { return []byte(s) }
