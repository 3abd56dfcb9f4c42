package trace

import (
	"bufio"
	"bytes"
	"container/heap"
	"io"
	"strconv"
)

// memcached's watch stream (memcached 1.6, `watch fetchers mutations`):
//
//	ts=1796535940.226050 gid=3 type=item_store key=foo status=stored cmd=set ttl=0 clsid=1 cfd=13 size=3
//	ts=1796535941.29124 gid=24 type=item_get key=sp%2520x status=not_found clsid=0 cfd=13 size=0
//
// as memcached 1.6.18 writes it. Its time is "%lld.%d" of a timeval: the
// fraction is a count of microseconds printed without leading zeros
// (".29124" is 29 124 µs), so it is read as a number, not as decimals.
// Keys are URI-encoded. Every store first fetches the key it replaces,
// and logs that fetch, so a fetch followed on its connection (cfd) by a
// store of the same key is the store's own and is not a read. A fetch
// does not say which command made it: gets, gats, touches, deletes and
// increments all read as gets. Worker threads log into buffers of their
// own, so lines arrive out of order; the global id (gid) restores it, as
// memcached's protocol.txt says, within a window of watchWindow lines.

// watchWindow is how many lines are held to put them back in gid order:
// far more than memcached's per-thread log buffers (64 KiB) hold.
const watchWindow = 1 << 16

// watchEvent is one line of the stream, held until it is in order.
type watchEvent struct {
	gid     uint64
	cfd     int64
	req     Request
	dropped bool // a store's own fetch
}

// watchHeap orders held events by gid.
type watchHeap []*watchEvent

func (h watchHeap) Len() int           { return len(h) }
func (h watchHeap) Less(i, j int) bool { return h[i].gid < h[j].gid }
func (h watchHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *watchHeap) Push(x any)        { *h = append(*h, x.(*watchEvent)) }
func (h *watchHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// watchReader reads memcached's watch stream.
type watchReader struct {
	l     lines
	held  watchHeap
	last  map[int64]*watchEvent // each connection's latest held event
	eof   bool
	stats Stats
}

func newWatchReader(br *bufio.Reader) *watchReader {
	return &watchReader{l: lines{r: br}, last: map[int64]*watchEvent{}}
}

func (w *watchReader) Stats() Stats { return w.stats }

func (w *watchReader) Next() (Request, error) {
	for {
		for !w.eof && len(w.held) <= watchWindow {
			if err := w.read(); err != nil {
				return Request{}, err
			}
		}
		if len(w.held) == 0 {
			return Request{}, io.EOF
		}
		e := heap.Pop(&w.held).(*watchEvent)
		if w.last[e.cfd] == e {
			delete(w.last, e.cfd)
		}
		if !e.dropped {
			return e.req, nil
		}
	}
}

// read reads one line, holding the request it carries.
func (w *watchReader) read() error {
	line, err := w.l.next()
	if err == io.EOF {
		w.eof = true
		return nil
	}
	if err != nil {
		return err
	}
	w.stats.Lines = w.l.n
	if len(line) == 0 || string(line) == "OK" {
		return nil
	}
	e, skipped, err := parseWatchLine(line, w.l.n)
	if err != nil {
		return w.l.fail(err)
	}
	w.stats.Lost += skipped
	if e == nil {
		return nil
	}
	if prev := w.last[e.cfd]; prev != nil && e.req.Op == Write && prev.req.Command == "get" && prev.req.Key == e.req.Key {
		prev.dropped = true
	}
	w.last[e.cfd] = e
	heap.Push(&w.held, e)
	return nil
}

// parseWatchLine reads one line: a fetch or a store, nil for the other
// types (evictions, connections), and the count of a "skipped" line.
func parseWatchLine(line []byte, n int64) (*watchEvent, int64, error) {
	f := map[string][]byte{}
	for field := range bytes.SplitSeq(line, []byte(" ")) {
		k, v, ok := bytes.Cut(field, []byte("="))
		if !ok || len(k) == 0 {
			return nil, 0, badLine(n, "%q is not a watch line of key=value fields", clip(line))
		}
		f[string(k)] = v
	}
	ts, ok := f["ts"]
	if !ok {
		return nil, 0, badLine(n, "%q is not a watch line: no ts=", clip(line))
	}
	t, ok := watchTime(ts)
	if !ok {
		return nil, 0, badLine(n, "time %q is not SECONDS.MICROSECONDS", clip(ts))
	}
	gid, err := strconv.ParseUint(string(f["gid"]), 10, 64)
	if err != nil {
		return nil, 0, badLine(n, "gid %q is not a number", clip(f["gid"]))
	}
	if s, ok := f["skipped"]; ok {
		v, ok := parseSize(s)
		if !ok {
			return nil, 0, badLine(n, "skipped=%q is not a count", clip(s))
		}
		return nil, v, nil
	}
	typ := string(f["type"])
	if typ != "item_get" && typ != "item_store" {
		return nil, 0, nil
	}
	return watchRequest(f, typ, t, gid, n)
}

// watchRequest builds the event of a fetch or a store from its fields.
func watchRequest(f map[string][]byte, typ string, t int64, gid uint64, n int64) (*watchEvent, int64, error) {
	e := &watchEvent{gid: gid, req: Request{Time: t, Size: -1}}
	for _, name := range []string{"key", "status", "cfd", "size"} {
		if _, ok := f[name]; !ok {
			return nil, 0, badLine(n, "a %s line without %s=", typ, name)
		}
	}
	key, err := percentDecode(f["key"])
	if err != nil || key == "" {
		return nil, 0, badLine(n, "key %q is not URI-encoded", clip(f["key"]))
	}
	e.req.Key = key
	cfd, err := strconv.ParseInt(string(f["cfd"]), 10, 64)
	size, ok := parseSize(f["size"])
	if err != nil || !ok {
		return nil, 0, badLine(n, "cfd=%q size=%q are not numbers", clip(f["cfd"]), clip(f["size"]))
	}
	e.cfd = cfd
	status := string(f["status"])
	if typ == "item_get" {
		e.req.Command, e.req.Op, e.req.Result = "get", Read, Miss
		if status == "found" {
			e.req.Result, e.req.Size = Hit, size
		}
		return e, 0, nil
	}
	cmd := string(bytes.ToLower(f["cmd"]))
	if cmd == "" {
		return nil, 0, badLine(n, "an item_store line without cmd=")
	}
	e.req.Command, e.req.Op, e.req.Size = cmd, Write, size
	return e, 0, nil
}

// watchTime reads "SECONDS.MICROSECONDS", the fraction a count of
// microseconds (see above), as nanoseconds.
func watchTime(b []byte) (int64, bool) {
	sec, frac, ok := bytes.Cut(b, []byte("."))
	s, ok1 := parseSize(sec)
	us, ok2 := parseSize(frac)
	if !ok || !ok1 || !ok2 || s > maxSeconds || us >= 1e6 {
		return 0, false
	}
	return s*1e9 + us*1e3, true
}
