package mover

import (
	"context"
	"net"
	"strconv"
	"time"

	"github.com/kolco-dev/kolco/proxy/redis"
)

// scanner lists the source's keys on a connection of its own and hands
// the moving ones, in batches by server, to the MIGRATE workers. Each
// request asks the sizes of the sampled keys of the last SCAN's reply and
// the next SCAN, pipelined: one round trip per SCAN, with the sizes read
// before those keys go (after, they are gone from the source).
type scanner struct {
	r       *run
	conn    net.Conn
	rr      *redis.ReplyReader
	pending map[string][][]byte
	// limit is the size of each pending batch, chosen as it began.
	limit map[string]int
	// cur are the moving keys of the last SCAN's reply, not handed on
	// yet, and sample those whose sizes the next request asks.
	cur    []moving
	sample [][]byte
	n      int // moving keys seen, for the sample
	listed int // keys listed
}

// scanMost is the largest SCAN's COUNT: a SCAN holds its server about 1.5
// to 2 µs a key listed (180 µs for about 100 on the 2-core test machine at
// a load of 15-20), so 1000 hold it about as long as the longest batch.
const scanMost = 1000

// count returns the next SCAN's COUNT: enough keys that their moving ones
// make about a batch, from the share of the keys listed so far that move;
// 100 at least, and scanMost at most. A COUNT of the batch's size, when a
// fifth of a server's keys move (one server of five added), listed a
// batch in five round trips, and the listing, not the MIGRATEs, set the
// move's pace: the sources spent 80% of a move idle.
func (s *scanner) count() int {
	size := max(s.r.sizer.size(), 100)
	if s.listed < scanMost {
		return size
	}
	return min(max(size*s.listed/(s.n+1), 100), scanMost)
}

// scan goes through the source and hands its moving keys to work. It
// returns nil at the end of the listing, or ctx's error.
func (r *run) scan(ctx context.Context, work chan<- batch) error {
	s := &scanner{r: r, pending: map[string][][]byte{}, limit: map[string]int{}}
	defer s.close()
	cursor, more := "0", true
	wait := r.cfg.Backoff
	for more || len(s.cur) > 0 {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		sizes, next, keys, err := s.ask(ctx, cursor, more)
		if err != nil {
			s.close()
			r.plan.Failed("", err)
			if !backoff(ctx, wait) {
				return ctx.Err()
			}
			wait = min(2*wait, 5*time.Second)
			continue
		}
		wait = r.cfg.Backoff
		for i, sz := range sizes {
			if sz >= 0 {
				r.sizer.sized(sz)
			}
			// With the big-key bounds every moving key is sized, in
			// the order of cur (see route).
			if r.cfg.BigElements > 0 && sz > r.cfg.suspect() && i < len(s.cur) {
				s.cur[i].suspect = true
			}
		}
		if err := s.handOn(ctx, work); err != nil {
			return err
		}
		if more {
			r.plan.Scanned(len(keys))
			s.route(keys)
			cursor, more = next, next != "0"
		}
	}
	for dst, keys := range s.pending {
		if len(keys) == 0 {
			continue
		}
		if err := send(ctx, work, batch{dst: dst, keys: keys}); err != nil {
			return err
		}
	}
	return nil
}

// ask sends the sizes of the sample and, when more, the SCAN from
// cursor, and reads their replies: the sizes of the sampled keys the
// source still holds, and the SCAN's next cursor and keys.
func (s *scanner) ask(ctx context.Context, cursor string, more bool) (sizes []int64, next string, keys [][]byte, err error) {
	cfg := s.r.cfg
	if s.conn == nil {
		if s.conn, err = s.r.dial(ctx); err != nil {
			return nil, "", nil, err
		}
		s.rr = redis.NewReplyReader(s.conn, redis.ReplyLimits{MaxBulk: cfg.MaxReply})
	}
	var req []byte
	usage := [][]byte{[]byte("MEMORY"), []byte("USAGE"), nil}
	if cfg.BigElements > 0 {
		// Up to BigElements elements weighed, not five: see big.go.
		usage = append(usage, []byte("SAMPLES"), strconv.AppendInt(nil, cfg.BigElements, 10))
	}
	for _, k := range s.sample {
		usage[2] = k
		req = redis.AppendArgs(req, usage)
	}
	count := s.count()
	if more {
		req = redis.AppendArgs(req, [][]byte{[]byte("SCAN"), []byte(cursor), []byte("COUNT"), strconv.AppendInt(nil, int64(count), 10)})
	}
	if err := s.conn.SetDeadline(time.Now().Add(cfg.Timeout)); err != nil {
		return nil, "", nil, err
	}
	if _, err := s.conn.Write(req); err != nil {
		return nil, "", nil, err
	}
	for range s.sample {
		reply, _, err := s.rr.Read(nil, nil)
		if err != nil {
			return nil, "", nil, err
		}
		n, ok := redis.Integer(reply)
		if !ok {
			n = -1 // nil: the key is gone
		}
		sizes = append(sizes, n)
	}
	s.sample = s.sample[:0]
	if !more {
		return sizes, "", nil, nil
	}
	reply, _, err := s.rr.Read(nil, nil)
	if err != nil {
		return nil, "", nil, err
	}
	if redis.IsError(reply) {
		return nil, "", nil, replyError("SCAN", reply)
	}
	c, keys, err := redis.ParseScan(reply)
	if err != nil {
		return nil, "", nil, err
	}
	return sizes, string(c), keys, nil
}

// route sorts the keys of a SCAN's reply by the server each goes to,
// leaving those that stay, and picks the sample among the moving ones.
func (s *scanner) route(keys [][]byte) {
	for _, k := range keys {
		dst := s.r.plan.Dest(k)
		if dst == "" {
			continue
		}
		if s.n%s.r.cfg.Sample == 0 || s.r.cfg.BigElements > 0 {
			s.sample = append(s.sample, k)
		}
		s.n++
		s.cur = append(s.cur, moving{dst: dst, key: k})
	}
	s.listed += len(keys)
}

// handOn moves the keys of the last reply to their servers' batches, and
// hands on each batch that is full.
func (s *scanner) handOn(ctx context.Context, work chan<- batch) error {
	for _, c := range s.cur {
		if c.suspect {
			// Its own batch, whose MIGRATE sizes it exactly first.
			if err := send(ctx, work, batch{dst: c.dst, keys: [][]byte{c.key}, probe: true}); err != nil {
				return err
			}
			continue
		}
		keys := append(s.pending[c.dst], c.key)
		if len(keys) == 1 {
			s.limit[c.dst] = s.r.sizer.batch()
		}
		if len(keys) >= s.limit[c.dst] {
			if err := send(ctx, work, batch{dst: c.dst, keys: keys}); err != nil {
				return err
			}
			keys = nil
		}
		s.pending[c.dst] = keys
	}
	s.cur = s.cur[:0]
	return nil
}

// moving is a key and the server it goes to.
type moving struct {
	dst string
	key []byte
	// suspect is set for a key whose MEMORY USAGE says it may be over
	// the big-key bounds.
	suspect bool
}

func (s *scanner) close() {
	if s.conn != nil {
		s.conn.Close()
		s.conn = nil
	}
}

// send hands b to a worker; it fails when ctx ends first.
func send(ctx context.Context, work chan<- batch, b batch) error {
	select {
	case work <- b:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
