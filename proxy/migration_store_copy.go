package proxy

import (
	"context"
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
// the pools that replace one another, as migrateRoles is.
type keyCopies struct {
	mu    sync.Mutex
	byKey map[string]*keyCopy
}

func newKeyCopies() *keyCopies { return &keyCopies{byKey: map[string]*keyCopy{}} }

// keyCopy is one key's copy from src.
type keyCopy struct {
	src  *backend
	done chan struct{} // closed when the copy ends, with err
	err  error
	// mu guards fromSource and changed: a read holds it, shared, from
	// the moment it chooses src until it is on src's connection of the
	// key; the copy takes it to stop reads from src, before it deletes
	// the key there on that connection, after them.
	mu         sync.RWMutex
	fromSource bool
	changed    chan struct{} // closed and replaced when fromSource changes
}

// start returns the copy of key from src under way, or starts one with
// run, under p's context.
func (k *keyCopies) start(p *pool, key []byte, src *backend, run func(ctx context.Context, kc *keyCopy) error) *keyCopy {
	k.mu.Lock()
	defer k.mu.Unlock()
	if kc, ok := k.byKey[string(key)]; ok && kc.src.addr == src.addr {
		return kc
	}
	kc := &keyCopy{src: src, done: make(chan struct{}), changed: make(chan struct{})}
	k.byKey[string(key)] = kc
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		kc.err = run(p.ctx, kc)
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

// readSource reports whether a read may go to src; if so the caller holds
// kc.mu, shared, until its read is on its way. If not, changed is closed
// when that may have changed.
func (kc *keyCopy) readSource() (ok bool, changed <-chan struct{}) {
	kc.mu.RLock()
	if kc.fromSource {
		return true, nil
	}
	changed = kc.changed
	kc.mu.RUnlock()
	return false, changed
}

// movedBig counts a big key the mover copied.
func (j *moveJob) movedBig() {
	j.m.stats.moved.Add(1)
	j.ss.pace.note(time.Now(), j.ss.moved.Add(1)+j.ss.onRequest.Load())
	j.p.stats.storeMoved.Add(1)
}
