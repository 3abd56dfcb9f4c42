package mover

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/kolco-dev/kolco/proxy/redis"
)

// migrateAll is worker w: it sends the batches of work, one MIGRATE at a
// time on a connection of its own, when the plan lets it, until work is
// closed. A MIGRATE that fails is reported and tried again after a
// backoff: its keys stay on the source until one succeeds.
func (r *run) migrateAll(ctx context.Context, w int, work <-chan batch) error {
	var conn net.Conn
	var rr *redis.ReplyReader
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	var req []byte
	for {
		if !r.plan.Admits(w) {
			select {
			case <-r.listed:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(10 * time.Millisecond):
				continue
			}
		}
		if err := r.wait(ctx, w); err != nil {
			return err
		}
		var b batch
		select {
		case next, ok := <-work:
			if !ok {
				return nil
			}
			b = next
		case <-ctx.Done():
			return ctx.Err()
		}
		for backoff := r.cfg.Backoff; ; backoff = min(2*backoff, 5*time.Second) {
			if conn == nil {
				c, err := r.dial(ctx)
				if err == nil {
					conn, rr = c, redis.NewReplyReader(c, redis.ReplyLimits{MaxBulk: r.cfg.MaxReply})
				} else if ctx.Err() != nil {
					return ctx.Err()
				} else {
					r.plan.Failed(b.dst, err)
					if !sleep(ctx, backoff) {
						return ctx.Err()
					}
					continue
				}
			}
			var err error
			req, err = r.plan.Migrate(req[:0], b.dst, b.keys)
			if err == nil {
				err = r.migrate(ctx, conn, rr, req, b)
			}
			if err == nil {
				break
			}
			if errors.Is(err, ErrStopped) || ctx.Err() != nil {
				return err
			}
			if !isServerError(err) {
				conn.Close() // out of step, or broken
				conn = nil
			}
			r.plan.Failed(b.dst, err)
			if !sleep(ctx, backoff) {
				return ctx.Err()
			}
			if err := r.wait(ctx, w); err != nil {
				return err
			}
		}
	}
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
	switch {
	case bytes.Equal(reply, []byte("+OK\r\n")), bytes.Equal(reply, []byte("+NOKEY\r\n")):
	case redis.IsError(reply):
		return replyError("MIGRATE", reply)
	default:
		return fmt.Errorf("%w: %q to MIGRATE", redis.ErrBadReply, reply)
	}
	r.sizer.observe(len(b.keys), took, inflight)
	r.plan.Moved(b.dst, len(b.keys), r.sizer.bytes(len(b.keys)), took)
	return nil
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
