package main

import (
	"bytes"
	"os"
	"time"
)

// settleFor is how long a changed configuration file must stay the same
// before the file watch applies it. An editor or a deployment tool that
// truncates the file and writes it in parts leaves a file that may well
// parse - one pool, one server - while it writes; applied, that would drop
// the other pools' clients and move keys. Two seconds covers writers that
// pause for a second and more; SIGHUP applies the file at once.
const settleFor = 2 * time.Second

// fileWatch decides when a watched configuration file has changed and
// settled: read twice or more, settle apart, and the same every time
// (equal bytes parse to the same configuration), so that no half-written
// file is applied, however much of the running configuration it would
// remove.
type fileWatch struct {
	path   string
	settle time.Duration
	seen   []byte    // the contents last applied or refused
	next   []byte    // contents that differ from seen, settling
	since  time.Time // when next was first read
}

// newFileWatch watches the file at path, seen as the proxy loaded it.
// Read again here, a file replaced meanwhile by one that blocks its
// reader (a FIFO, as TestSignalsTogetherEachTaken holds a reload with)
// held the loop that takes the signals before it took any: a busy machine
// started the loop after the test had replaced the file.
func newFileWatch(path string, settle time.Duration, seen []byte) *fileWatch {
	return &fileWatch{path: path, settle: settle, seen: seen}
}

// check reads the file and returns its contents to apply once they have
// differed from what was last seen and stayed the same for settle; nil
// otherwise. A file that cannot be read (being replaced) is not a change.
func (w *fileWatch) check(now time.Time) []byte {
	cur, err := os.ReadFile(w.path)
	switch {
	case err != nil:
		return nil
	case bytes.Equal(cur, w.seen):
		w.next = nil
		return nil
	case !bytes.Equal(cur, w.next):
		w.next, w.since = cur, now
		return nil
	case now.Sub(w.since) < w.settle:
		return nil
	}
	w.seen, w.next = cur, nil
	return cur
}

// applied records contents applied by other means (SIGHUP), so that the
// watch does not apply them again.
func (w *fileWatch) applied(data []byte) { w.seen, w.next = data, nil }
