package proxy

import (
	"bufio"
	"errors"
	"slices"
	"time"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// warmKey is one key a request falls back for.
type warmKey struct {
	i    int    // its index in the request
	key  []byte // as sent: base64 text when b64
	b64  bool
	h    uint64
	n    *backend // its server now
	srcs [maxWarmDepth]*backend
	nsrc int
	// snap is the key's stripe count when the fallback began.
	snap uint64
	// What the fallback found, and the copy made of it.
	found  bool
	val    memcache.MetaValue
	copied bool
	cas    uint64
}

// oneKey returns the warmKey of a one-key request.
func (w *warmState) oneKey(r *mcRequest) warmKey {
	k := warmKey{key: r.req.Keys[0], b64: r.req.Base64, h: w.hash, n: w.n}
	k.nsrc = copy(k.srcs[:], w.srcs)
	return k
}

// fallbackOne falls back for the one key of r, a read that missed,
// answers from what it finds, and ends the request.
func (w *warmState) fallbackOne(r *mcRequest) {
	w.keys = append(w.keys[:0], w.oneKey(r))
	w.fallback(r)
	if k := &w.keys[0]; k.found && r.req.Cmd == memcache.CmdMetaGet {
		// Ask the new server again, now that it holds the value, for the
		// flags mg asked for, its CAS value among them.
		o := mcOf(r.ops[0])
		o.reply, o.spans, o.err, o.role = o.reply[:0], o.spans[:0], nil, roleWait
		o.batch = nil // sent off the client's reader: written at once
		o.to, o.deadline = k.n, time.Now().Add(w.pool.cfg.Timeout)
		w.one[0] = o
		w.run(w.one[:], false, nil)
	}
	r.warmEnd()
}

// afterSplit runs when every op of r, a multi-key read, is done: it
// falls back for the keys that missed and ends the request. The keys of
// an op that failed, or whose server answered an error, do not fall
// back: their server's state is unknown.
func (w *warmState) afterSplit(r *mcRequest) {
	w.keys = w.keys[:0]
	replies := r.replies[:0]
	for _, o := range r.ops {
		replies = append(replies, memcache.Reply{Data: o.reply, Spans: mcOf(o).spans})
	}
	r.replies = replies
	r.split.Begin(replies)
	for i, key := range r.req.Keys {
		part := r.split.PartOf(i)
		o := r.ops[part]
		if r.split.Value(i) != nil || o.err != nil || memcache.IsErrorReply(o.reply) || w.owners[part] == nil {
			continue
		}
		k := warmKey{i: i, key: key, h: keyHash(key), n: w.owners[part]}
		var buf [maxWarmDepth]*backend
		srcs := w.m.sources(buf[:0], key, k.n, &w.scratch)
		for _, s := range srcs {
			if w.m.readable(s) {
				k.srcs[k.nsrc] = s
				k.nsrc++
			}
		}
		if k.nsrc > 0 {
			w.keys = append(w.keys, k)
		}
	}
	if len(w.keys) == 0 {
		r.warmEnd()
		return
	}
	go func() {
		w.fallback(r)
		r.warmEnd()
	}()
}

// fallback looks up w.keys at their previous servers, newest first, all
// keys at once at each depth; copies what it finds to the keys' servers;
// and, for a read, records the values to answer in w.fills.
func (w *warmState) fallback(r *mcRequest) {
	st := w.pool.mig.stats
	for i := range w.keys {
		w.keys[i].snap = w.pool.mig.stripes.of(w.keys[i].h).writes.Load()
	}
	for depth := range maxWarmDepth {
		w.ops = w.ops[:0]
		var idx []int
		for i := range w.keys {
			k := &w.keys[i]
			if k.found || depth >= k.nsrc || !w.m.readable(k.srcs[depth]) {
				continue
			}
			o := w.newOp(memcache.CmdMetaGet, k.srcs[depth])
			o.buf = memcache.AppendMetaFetch(o.buf[:0], k.key, k.b64)
			idx = append(idx, i)
		}
		if len(idx) == 0 {
			break
		}
		w.run(w.ops, true, func(j int) uint64 { return w.keys[idx[j]].h })
		for j, o := range w.ops {
			k := &w.keys[idx[j]]
			v, hit, err := memcache.ParseMetaValue(o.reply)
			switch {
			case errors.Is(o.err, memcache.ErrValueTooLarge):
			case o.err != nil || err != nil:
				w.m.taint(o.to)
				st.add(st.m.cleanFails, &st.cleanFails, 1)
			case hit:
				k.found, k.val = true, v
				// Keep the reply the value points into: the op is not
				// reused before the request ends.
				w.ops[j] = nil
			}
		}
		w.ops = slices.DeleteFunc(w.ops, func(o *mcOp) bool { return o == nil })
	}
	hits := 0
	for i := range w.keys {
		w.m.fallbackFound(w.keys[i].found)
		if w.keys[i].found {
			hits++
		}
	}
	st.add(st.m.fallbacks, &st.fallbacks, len(w.keys))
	st.add(st.m.hits, &st.hits, hits)
	w.copyFound(r)
	if w.class == warmRead {
		w.fillFound(r)
	}
}

// copyFound copies the values the fallback found to the keys' servers in
// add mode, unless a write or delete of the key was sent since the
// fallback began (see mc_warm.go) or the window closed.
func (w *warmState) copyFound(r *mcRequest) {
	st := w.pool.mig.stats
	w.locks = w.locks[:0]
	for i := range w.keys {
		if w.keys[i].found {
			w.locks = append(w.locks, int(w.keys[i].h%nStripes))
		}
	}
	if len(w.locks) == 0 {
		return
	}
	m := w.m
	m.copying.RLock()
	defer m.copying.RUnlock()
	if m.state.Load() != migOpen {
		st.add(st.m.raced, &st.raced, len(w.locks))
		return
	}
	slices.Sort(w.locks)
	w.locks = slices.Compact(w.locks)
	stripes := w.pool.mig.stripes
	for _, s := range w.locks { // in order: two fallbacks never wait for each other
		stripes[s].mu.Lock()
	}
	defer func() {
		for _, s := range w.locks {
			stripes[s].mu.Unlock()
		}
	}()
	w.addCopies(r)
}

// addCopies sends the adds of copyFound, with the keys' stripes locked,
// and counts what each did: copied, refused (the server holds the key
// already), or raced (a write was sent since the fallback began).
func (w *warmState) addCopies(r *mcRequest) {
	st, stripes := w.pool.mig.stats, w.pool.mig.stripes
	touch := r.req.Cmd == memcache.CmdGat || r.req.Cmd == memcache.CmdGats
	now := time.Now().Unix()
	pl := w.pool.place.Load() // the newest: a return since sends the key back
	pull := classify(&r.req) == warmPull
	w.ops = w.ops[:0]
	var idx []int
	for i := range w.keys {
		k := &w.keys[i]
		if !k.found {
			continue
		}
		exp, ok := memcache.StoreTTL(k.val.TTL, now)
		if touch {
			exp, ok = r.req.Exptime, true // gat's new expiry
		}
		if !ok || stripes.of(k.h).writes.Load() != k.snap {
			st.add(st.m.raced, &st.raced, 1)
			continue
		}
		if !pull && pl.standsIn(r.req.Key(k.i), k.n) {
			// A read's copy on a stand-in is no write of the outage: the
			// return neither settles nor removes it, and a second failure
			// that sends the key there again reads it, older than what
			// the key's server took since (the fault schedule's seed
			// 3553: modula, s3 out, then s1 and s3). get and gat answer
			// the value found uncopied; gets, gats and mg, which answer
			// the copy's CAS, miss, as a read at the stand-in outside a
			// window does (see fence). A pull (incr, add, cas, append,
			// touch, ...) copies it all the same: it is a write of the
			// outage, noted, which the return settles from the stand-in.
			continue
		}
		o := w.newOp(memcache.CmdMetaSet, k.n)
		o.buf = memcache.AppendMetaAdd(o.buf[:0], k.key, k.b64, exp, k.val.Flags, k.val.Data)
		idx = append(idx, i)
	}
	w.run(w.ops, false, nil)
	for j, o := range w.ops {
		stored, cas, err := memcache.ParseMetaStored(o.reply)
		switch {
		case o.err != nil || err != nil:
		case stored:
			w.keys[idx[j]].copied, w.keys[idx[j]].cas = true, cas
			st.add(st.m.copies, &st.copies, 1)
		default:
			st.add(st.m.refused, &st.refused, 1)
		}
	}
}

// fillFound records the VALUE entries of the values found, by key index:
// gets and gats answer only the values copied, with the CAS value of the
// copy, the key's server's; mg is asked again instead (fallbackOne).
func (w *warmState) fillFound(r *mcRequest) {
	cmd := r.req.Cmd
	if cmd == memcache.CmdMetaGet {
		return
	}
	withCas := cmd == memcache.CmdGets || cmd == memcache.CmdGats
	w.fills = slices.Grow(w.fills[:0], len(r.req.Keys))[:len(r.req.Keys)]
	clear(w.fills)
	for i := range w.keys {
		k := &w.keys[i]
		if !k.found || withCas && !k.copied {
			continue
		}
		start := len(w.fillBuf)
		w.fillBuf = memcache.AppendValue(w.fillBuf, k.key, k.val.Flags, k.val.Data, k.cas, withCas)
		w.fills[k.i] = fillSpan{start, len(w.fillBuf)}
	}
}

// fill returns the VALUE entry the fallback found for key i at its
// previous server, or nil; nil too for a nil w, a request that was never
// in a window.
func (w *warmState) fill(i int) []byte {
	if w == nil || !w.active || i >= len(w.fills) || w.fills[i].end == 0 {
		return nil
	}
	return w.fillBuf[w.fills[i].start:w.fills[i].end]
}

// writeFill writes the value found by falling back for key i, if any.
func (w *warmState) writeFill(bw *bufio.Writer, i int) error {
	v := w.fill(i)
	if v == nil {
		return nil
	}
	_, err := bw.Write(v)
	return err
}

// writeWarm writes the reply of a one-key request in a migration window
// when it differs from the server's: a read answered by falling back, a
// delete of a key only a previous server held. done is false when the
// server's reply stands.
func (r *mcRequest) writeWarm(bw *bufio.Writer) (done bool, err error) {
	w := r.warm
	if w.class == warmRead && len(r.req.Keys) > 1 {
		// Split over one server or more: merged with what was found.
		return true, r.writeMerged(bw)
	}
	o := r.ops[0]
	if o.err != nil || len(r.req.Keys) != 1 {
		return false, nil
	}
	switch {
	case w.class == warmRead && len(w.fills) > 0 && w.fills[0].end > 0:
		if err := w.writeFill(bw, 0); err != nil {
			return true, err
		}
		_, err := bw.Write(o.reply) // END
		return true, err
	case w.class == warmDelete && w.deleted.Load():
		switch string(o.reply) {
		case "NOT_FOUND\r\n":
			return true, r.writeServerReply(bw, []byte("DELETED\r\n"))
		case "NF\r\n":
			return true, r.writeServerReply(bw, []byte("HD\r\n"))
		}
	}
	return false, nil
}

// splitWarm sends a multi-key read in the migration window of pl as
// the memcached front splits it, each op to the server of its keys; the
// keys that miss fall back once every op is done (afterSplit).
func (r *mcRequest) splitWarm(p *pool, pl *placement) bool {
	r.warm = r.warm.open(p, pl.mig)
	w := r.warm
	w.class = warmRead
	to := r.splitKeys(p, pl)
	w.owners = append(w.owners[:0], to...)
	for _, o := range r.ops {
		mcOf(o).role = roleSplit
	}
	w.enterGate(r)
	// Fenced as outside a window (see forwardWarm).
	if err := p.outages.fenceReads(pl, len(r.req.Keys), r.req.Key, r.batch.flush); err != nil {
		r.failOps(err)
		return true
	}
	r.sendParts(to)
	return true
}
