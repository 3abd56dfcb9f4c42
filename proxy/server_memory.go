package proxy

import (
	"os"
	"runtime/debug"
	"time"
)

// MemoryOverhead is what a proxy holds beyond kolco.buffer_limit, at the
// most, when it manages its memory (see Server.ManageMemory): the runtime,
// placements, connections and their buffers, and the garbage the
// collector has not yet reclaimed.
const MemoryOverhead = 256 << 20

// ManageMemory makes the server manage the process's memory, as a process
// of its own (kolco proxy) does; call it before Start. The Go runtime's
// memory limit is set to kolco.buffer_limit plus MemoryOverhead at each
// configuration applied, unless GOMEMLIMIT is set in the environment, so
// that the collector works harder rather than let garbage pass the
// budget; and once the buffers have drained after holding much, the
// memory they held is returned to the system rather than kept for the
// next burst.
func (s *Server) ManageMemory() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.memory = true
}

// limitMemory sets the runtime's memory limit for a buffer limit.
func limitMemory(bufferLimit int64) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(bufferLimit + MemoryOverhead)
}

// Returning memory: looking once a second, once the buffers have held more
// than returnAfter and hold less than returnBelow, the heap is collected
// and its free memory returned to the system.
const (
	returnAfter = 64 << 20
	returnBelow = 8 << 20
)

// returnMemory returns the memory b's buffers held to the system after
// each burst, until stopped reports the server shuts down.
func returnMemory(b *budget, stopped func() bool) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	burst := false
	for range tick.C {
		if stopped() {
			return
		}
		high, now := b.highSinceLast()
		burst = burst || high > returnAfter
		if burst && now < returnBelow {
			debug.FreeOSMemory()
			burst = false
		}
	}
}
