//go:build purego

package proxy

// keyString returns a copy of key: the portable twin of the zero-copy
// version, selected with the purego build tag.
func keyString(key []byte) string { return string(key) }
