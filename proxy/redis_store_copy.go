package proxy

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Big keys in a store's move. A key too big to move in one step without
// holding its server (for Redis, over store.big_key_elements or
// big_key_bytes) is copied piece by piece by the front, and while it is
// the proxy holds only that key's writes: they wait for the copy, as a
// write of a moving key waits for its MIGRATE. Its reads go to the
// server that held it, whose copy is the key, whole and unchanged (no
// write reaches it), until the copy has made the new server's whole and
// deletes the old one's. A request and the mover that meet the same key
// join one copy.

// keyCopies are the copies of big keys a proxy runs, by key; shared by
// the pools that replace one another, as migrateRoles is. Its zero value
// is ready.
type keyCopies struct {
	mu    sync.Mutex
	byKey map[string]*keyCopy
}

// keyCopy is one key's copy from src.
type keyCopy struct {
	src  *backend
	hash uint64        // the key's, for its connection to src
	done chan struct{} // closed when the copy ends, with err
	err  error
	// mu guards fromSource and changed: a read holds it, shared, from
	// the moment it chooses src until it is counted in reads and sent;
	// the copy takes it to stop reads from src before it waits for
	// those sent (awaitReads) and deletes the key there.
	mu         sync.RWMutex
	fromSource bool
	changed    chan struct{} // closed and replaced when fromSource changes
	// reads counts the reads sent to src that src has not answered,
	// nor failed, yet; drained, when the copy waits for them, is closed
	// as the last ends. A count, not the order of one connection: a
	// read goes on the connection of its client's protocol (a RESP3
	// client's on src's RESP3 connections, see op.dialect), which the
	// delete does not share, and src may run the delete first.
	readsMu sync.Mutex
	reads   int
	drained chan struct{}
}

var (
	// errKeyCopying is the error of a request for a big key whose copy
	// runs past the request's deadline.
	errKeyCopying = errors.New("the key is big and moves to its new server piece by piece: its writes wait for it")
	// errReadsUnanswered is a big key's copy's when reads sent to its
	// old server were not answered by its delete's deadline: the old
	// server's copy stays, and the key is copied again.
	errReadsUnanswered = errors.New("reads of the key at its old server are unanswered: it is not deleted there")
)

// copyKey returns the copy of key from src under way, or starts one: run
// copies it under the pool's context, telling holding whether src holds
// the key for it (reads may go there), and deleting it there with del,
// which stops those reads and waits for their answers first.
func (mv *storeMover) copyKey(key []byte, src *backend, run func(ctx context.Context, src *backend, holding func(bool), del func(*op)) error) *keyCopy {
	k := mv.copies
	k.mu.Lock()
	defer k.mu.Unlock()
	if kc, ok := k.byKey[string(key)]; ok && kc.src.addr == src.addr {
		return kc
	}
	if k.byKey == nil {
		k.byKey = map[string]*keyCopy{}
	}
	kc := &keyCopy{src: src, hash: keyHash(key), done: make(chan struct{}), changed: make(chan struct{})}
	k.byKey[string(key)] = kc
	mv.wg.Add(1)
	go func() {
		defer mv.wg.Done()
		kc.err = run(mv.ctx, src, kc.setFromSource, func(o *op) {
			kc.setFromSource(false) // no read is sent to src from now on
			// The wait for the reads within half the copy's lease, the
			// delete's own time whole after it (see bigKeyLease).
			budget := time.Until(o.deadline)
			if err := kc.awaitReads(time.Now().Add(min(budget, bigKeyLease/2))); err != nil {
				o.finish(err)
				return
			}
			o.deadline = time.Now().Add(budget)
			src.sendKeyed(o, kc.hash)
		})
		k.mu.Lock()
		if k.byKey[string(key)] == kc {
			delete(k.byKey, string(key))
		}
		k.mu.Unlock()
		close(kc.done)
	}()
	return kc
}

// setFromSource says whether reads may go to src.
func (kc *keyCopy) setFromSource(on bool) {
	kc.mu.Lock()
	defer kc.mu.Unlock()
	if kc.fromSource != on {
		kc.fromSource = on
		close(kc.changed)
		kc.changed = make(chan struct{})
	}
}

// await waits for the copy to end, by deadline (none when zero) or
// until ctx ends, and returns its error; but when read is set it returns
// reading once src holds the key for the copy, with the copy's reads
// held: the caller sends its read with sendRead, or lets go with release.
func (kc *keyCopy) await(ctx context.Context, deadline time.Time, read bool) (reading bool, err error) {
	var timeout <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		timeout = t.C
	}
	for {
		var changed <-chan struct{}
		if read {
			kc.mu.RLock()
			if kc.fromSource {
				return true, nil
			}
			changed = kc.changed
			kc.mu.RUnlock()
		}
		select {
		case <-kc.done:
			return false, kc.err
		case <-changed:
		case <-timeout:
			return false, errKeyCopying
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// sendRead sends o, a read of the key, to src, counted in reads until
// it ends, and lets the copy go on.
func (kc *keyCopy) sendRead(o *op) {
	kc.readsMu.Lock()
	kc.reads++
	kc.readsMu.Unlock()
	done := o.done
	o.done = func(o *op) {
		o.done = done // the request's again, for its next use
		kc.readEnded()
		done(o)
	}
	kc.src.sendKeyed(o, kc.hash)
	kc.mu.RUnlock()
}

// readEnded counts a read sent to src answered, or failed.
func (kc *keyCopy) readEnded() {
	kc.readsMu.Lock()
	defer kc.readsMu.Unlock()
	if kc.reads--; kc.reads == 0 && kc.drained != nil {
		close(kc.drained)
		kc.drained = nil
	}
}

// awaitReads waits until src has answered, or failed, every read sent to
// it, by deadline; errReadsUnanswered when the deadline comes first. A
// read ends by its own deadline, the pool's timeout from its start, which
// came before this wait (unless its reply is still coming): deadline,
// within half the copy's lease (see bigKeyLease), only bounds the wait,
// and a read that outlives it fails the copy rather than let the delete
// pass it.
func (kc *keyCopy) awaitReads(deadline time.Time) error {
	kc.readsMu.Lock()
	if kc.reads == 0 {
		kc.readsMu.Unlock()
		return nil
	}
	drained := make(chan struct{})
	kc.drained = drained
	kc.readsMu.Unlock()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-drained:
		return nil
	case <-t.C:
		return errReadsUnanswered
	}
}

// release lets the copy go on, when a read await let through is not
// sent.
func (kc *keyCopy) release() { kc.mu.RUnlock() }

// bigKey copies key, big, from the job's server with run (see
// storeMover.copyKey), or waits for the copy under way, and counts it moved.
func (j *moveJob) bigKey(ctx context.Context, key []byte, run func(ctx context.Context, src *backend, holding func(bool), del func(*op)) error) error {
	_, err := j.mv.copyKey(key, j.src, run).await(ctx, time.Time{}, false)
	if err == nil {
		j.m.stats.moved.Add(1)
		j.ss.pace.note(time.Now(), j.ss.moved.Add(1)+j.ss.onRequest.Load())
		j.mv.counted(1)
	}
	return err
}
