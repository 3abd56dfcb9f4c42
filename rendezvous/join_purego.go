//go:build purego

package rendezvous

import "github.com/kolco-dev/kolco/keyhash"

// joinHash returns h(prefix + key). This portable twin allocates the joined
// string; the default build joins in a stack buffer.
func joinHash(h keyhash.Func, _ *[bufSize]byte, prefix, key string) uint64 {
	return h(prefix + key)
}
