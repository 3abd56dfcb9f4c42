package proxy

import "slices"

// A stand-in's own copies of the keys it stands in for may be older than
// any the pool serves: a change that moved a key from it to another
// server left its copy behind (Redis pools' changes are cold, and a
// memcached window ends), and when that server is marked down the key is
// routed back to the stand-in, which would serve the value of before the
// change. So while a server is out, the first read of one of its keys at
// a stand-in that no write of the outage reached removes the stand-in's
// copy first (fence): the read misses, never returns an older value, and
// the client that refills the key writes it to the stand-in, noted in the
// outage as any write around the server is. A journal that overflowed no
// longer says which keys were written: each read of the server's keys at
// a stand-in removes its copy first, until the server is back.

// fence reports whether a read of key at the stand-in at addr must remove
// the stand-in's copy first, and records that it was removed.
func (o *outage) fence(key []byte, addr string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.overflow {
		return true
	}
	if slices.Contains(o.keys[string(key)], addr) || slices.Contains(o.fenced[string(key)], addr) {
		return false
	}
	if o.fenced == nil {
		o.fenced = map[string][]string{}
	}
	if len(o.fenced) < o.limit {
		o.fenced[string(key)] = append(o.fenced[string(key)], addr)
	}
	return true
}

// unfence forgets that key was removed from the stand-in at addr: the
// removal failed, and the next read tries again.
func (o *outage) unfence(key, addr string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if i := slices.Index(o.fenced[key], addr); i >= 0 {
		o.fenced[key] = slices.Delete(o.fenced[key], i, i+1)
	}
}

// fenceReads removes, from the stand-ins a read of keys goes to by pl,
// their copies of the keys of servers out that no write of the outage
// reached them with (see outage.fence), before the read is sent. flush
// writes the client's queued requests first, as the removal waits. A
// removal that fails is tried again by the next read; the read goes on,
// to a stand-in that most likely fails it too.
func (p *pool) fenceReads(pl *placement, keys [][]byte, flush func()) {
	if p.outages.Load() == 0 || pl.replicas > 1 {
		return
	}
	var sc routeScratch
	var at map[*backend][]string
	var by map[string]*outage
	for _, key := range keys {
		r := pl.route(key, false, &sc)
		if len(r) == 0 {
			continue
		}
		s := r[0]
		for _, b := range p.backends {
			o := b.outage.Load()
			if o == nil || b == s || !pl.movesOnReturn(key, b, s, &sc) || !o.fence(key, s.addr) {
				continue
			}
			if at == nil {
				at, by = map[*backend][]string{}, map[string]*outage{}
			}
			at[s] = append(at[s], string(key))
			by[string(key)] = o
			break
		}
	}
	if at == nil {
		return
	}
	if flush != nil {
		flush()
	}
	for s, ks := range at {
		if err := p.front.release(p.ctx, s, ks); err != nil {
			for _, k := range ks {
				by[k].unfence(k, s.addr)
			}
			p.log.Warn("removing a stand-in's copies before reading them failed", "server", s.name(), "addr", s.addr, "keys", len(ks), "err", err)
		}
	}
}
