//go:build !linux

package redis

// release does nothing where the system takes no advice on memory: the
// outgrown buffer is garbage until collected.
func release([]byte) {}
