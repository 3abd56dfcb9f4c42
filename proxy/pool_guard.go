package proxy

// guardWrite holds p's returns for a write of the call about to be
// routed, of the n keys key gives, in a pool that journals outages (the
// caller asks outages.keeps first: a write in a pool that keeps none runs
// nothing of this); flush writes the client's queued requests should it
// wait (see outages.guardWrite).
func (c *call) guardWrite(p *pool, flush func(), n int, key func(int) []byte) {
	for i := range n {
		c.guardKeys = append(c.guardKeys, key(i))
	}
	p.outages.guardWrite(flush)
	c.guard = p.outages
}

// unguard releases the call's hold on its pool's returns, noting the keys
// it wrote; the caller asks c.guard first, so that a call that holds none
// runs nothing of this file.
func (c *call) unguard() {
	c.guard.doneWrite(c.guardKeys, c.start, c.guardLost.Swap(false))
	c.guard, c.guardKeys = nil, dropKeys(c.guardKeys)
}

// dropKeys returns keys emptied, holding none of the request's memory
// they pointed into (a large request's is let go of once it is done).
func dropKeys(keys [][]byte) [][]byte {
	clear(keys)
	return keys[:0]
}
