package proxy

import "sync/atomic"

// clientSeen is what other clients see of a client: Redis's CLIENT ID and
// CLIENT LIST.
type clientSeen struct {
	// id numbers the client in the process, from 1.
	id uint64
	// about is what the client's front says of it; nil before it says
	// anything.
	about atomic.Value
	// peers returns the clients of its listener, itself included, in
	// the order they connected.
	peers func() []*client
}
