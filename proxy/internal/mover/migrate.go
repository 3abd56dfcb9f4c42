package mover

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/kolco-dev/kolco/proxy/redis"
)

// migrateAll is worker w: it sends the batches of work, one MIGRATE at a
// time on a connection of its own, when the plan lets it, until work is
// closed. A MIGRATE that fails is reported and tried again after a
// backoff: its keys stay on the source until one succeeds.
func (r *run) migrateAll(ctx context.Context, w int, work <-chan batch) error {
	wk := &worker{r: r, w: w}
	defer wk.close()
	for {
		b, ok, err := wk.next(ctx, work)
		if err != nil || !ok {
			return err
		}
		if err := wk.send(ctx, b); err != nil {
			return err
		}
	}
}

// worker is one of a run's MIGRATE senders, with its connection.
type worker struct {
	r    *run
	w    int
	conn net.Conn
	rr   *redis.ReplyReader
	req  []byte
}

func (wk *worker) close() {
	if wk.conn != nil {
		wk.conn.Close()
	}
}

// next returns the next batch once the plan lets the worker send it;
// false once work is closed, or the listing is done while the plan holds
// the worker back.
func (wk *worker) next(ctx context.Context, work <-chan batch) (batch, bool, error) {
	r := wk.r
	for {
		ok, changed := r.plan.Admits(wk.w)
		if ok {
			break
		}
		select {
		case <-r.listed:
			return batch{}, false, nil
		case <-ctx.Done():
			return batch{}, false, ctx.Err()
		case <-changed:
		}
	}
	var b batch
	select {
	case next, ok := <-work:
		if !ok {
			return batch{}, false, nil
		}
		b = next
	case <-ctx.Done():
		return batch{}, false, ctx.Err()
	}
	// The batch is taken before the wait, so that the move's end is
	// seen at once and not after a wait for a batch there is none of.
	if err := r.wait(ctx, wk.w); err != nil {
		return batch{}, false, err
	}
	return b, true, nil
}

// send migrates b, dialing when the worker has no connection, and tries
// again after a backoff until it succeeds or the move stops.
func (wk *worker) send(ctx context.Context, b batch) error {
	r := wk.r
	for wait := r.cfg.Backoff; ; wait = min(2*wait, 5*time.Second) {
		err := wk.dial(ctx)
		if err == nil {
			var args [][]byte
			if args, err = r.plan.Migrate(b.dst); err == nil {
				elems := int64(0)
				if b.probe {
					elems = r.cfg.BigElements
				}
				wk.req = AppendMigrate(wk.req[:0], args, b.keys, elems, r.cfg.BigBytes)
				err = r.migrate(ctx, wk.conn, wk.rr, wk.req, b)
			}
			if err == nil {
				return nil
			}
			if errors.Is(err, ErrStopped) || ctx.Err() != nil {
				return err
			}
			if !isServerError(err) {
				wk.conn.Close() // out of step, or broken
				wk.conn = nil
			}
		} else if ctx.Err() != nil {
			return ctx.Err()
		}
		r.plan.Failed(b.dst, err)
		if !backoff(ctx, wait) {
			return ctx.Err()
		}
		if err := r.wait(ctx, wk.w); err != nil {
			return err
		}
	}
}

// dial gives the worker a connection, unless it has one.
func (wk *worker) dial(ctx context.Context) error {
	if wk.conn != nil {
		return nil
	}
	c, err := wk.r.dial(ctx)
	if err != nil {
		return err
	}
	wk.conn, wk.rr = c, redis.NewReplyReader(c, redis.ReplyLimits{MaxBulk: wk.r.cfg.MaxReply})
	return nil
}

// wait is the plan's Wait, its error stopping the move.
func (r *run) wait(ctx context.Context, w int) error {
	if err := r.plan.Wait(ctx, w); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %w", ErrStopped, err)
	}
	return nil
}

// migrate sends one MIGRATE of b on conn, held as the plan says, and
// reports it moved.
func (r *run) migrate(ctx context.Context, conn net.Conn, rr *redis.ReplyReader, req []byte, b batch) error {
	release, err := r.plan.Hold(ctx, b.dst)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %w", ErrStopped, err)
	}
	inflight := r.inflight.Add(1)
	start := time.Now()
	reply, err := exchange(conn, rr, req, start.Add(r.cfg.MigrateTimeout))
	took := time.Since(start)
	r.inflight.Add(-1)
	release()
	if err != nil {
		return err
	}
	_, big, err := ParseMigrate(reply, len(b.keys))
	if err != nil {
		return err
	}
	gone := without(b.keys, big)
	n := len(gone)
	r.sizer.observe(n, took, inflight)
	r.plan.Moved(b.dst, gone, r.sizer.bytes(n), took)
	for _, key := range big {
		if err := r.plan.Big(ctx, b.dst, key); err != nil {
			return err
		}
	}
	return nil
}

// without returns keys but those of out, the big keys a MIGRATE left on
// the source: keys itself when out is empty, as it nearly always is.
func without(keys, out [][]byte) [][]byte {
	if len(out) == 0 {
		return keys
	}
	var kept [][]byte
	for _, k := range keys {
		if !slices.ContainsFunc(out, func(o []byte) bool { return bytes.Equal(o, k) }) {
			kept = append(kept, k)
		}
	}
	return kept
}

// exchange writes req on conn and reads its one reply, by deadline.
func exchange(conn net.Conn, rr *redis.ReplyReader, req []byte, deadline time.Time) ([]byte, error) {
	if err := conn.SetDeadline(deadline); err != nil {
		return nil, err
	}
	if _, err := conn.Write(req); err != nil {
		return nil, err
	}
	reply, _, err := rr.Read(nil, nil)
	return reply, err
}

// ServerError is a server's error reply to a command of the move, such
// as "IOERR error or timeout reading to target instance": the
// connection stays in step.
type ServerError struct {
	Command, Reply string
}

func (e *ServerError) Error() string { return e.Command + ": " + e.Reply }

func replyError(cmd string, reply []byte) error {
	return &ServerError{Command: cmd, Reply: string(bytes.TrimSpace(reply[1:]))}
}

func isServerError(err error) bool {
	var se *ServerError
	return errors.As(err, &se)
}
