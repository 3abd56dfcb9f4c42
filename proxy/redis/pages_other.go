//go:build !linux

package redis

// dropPages does nothing where the system takes no advice on memory: the
// outgrown buffer is garbage until collected.
func dropPages([]byte) {}
