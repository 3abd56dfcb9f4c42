package metadump

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// busyRetry is the first wait before asking a busy server again; each
// wait doubles up to busyRetryMax, until the context ends.
const (
	busyRetry    = 50 * time.Millisecond
	busyRetryMax = time.Second
)

// List asks the memcached server at addr (network "tcp" or "unix") for
// its items and calls each for every one as it is read, on a connection
// of its own that it closes before returning. A server busy with another
// crawl is asked again, waiting longer each time, until ctx ends. An
// error from each stops the listing and is returned. Otherwise the error
// wraps [ErrBad] for a reply it cannot read, is [ErrBusy] when ctx ends
// while the server is still busy, or is the network's own, or ctx's error
// when it ends first.
func List(ctx context.Context, network, addr string, each func(Item) error) error {
	return ListDial(ctx, func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}, each)
}

// ListDial is List over connections dial opens, such as TLS ones.
func ListDial(ctx context.Context, dial func(context.Context) (net.Conn, error), each func(Item) error) error {
	wait := busyRetry
	for busy := false; ; busy = true {
		err := listOnce(ctx, dial, each)
		if busy && err != nil && ctx.Err() != nil {
			// ctx ended during a later attempt: what kept the dump from
			// being read is still the other crawl.
			return fmt.Errorf("%w (%v)", ErrBusy, ctx.Err())
		}
		if !errors.Is(err, ErrBusy) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (%v)", ErrBusy, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, busyRetryMax)
	}
}

// listOnce asks the server dial reaches for its items once.
func listOnce(ctx context.Context, dial func(context.Context) (net.Conn, error), each func(Item) error) error {
	conn, err := dial(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := io.WriteString(conn, Command); err != nil {
		return ctxErr(ctx, err)
	}
	r := NewReader(bufio.NewReaderSize(conn, 64<<10))
	for {
		it, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return ctxErr(ctx, err)
		}
		if err := each(it); err != nil {
			return err
		}
	}
}

// ctxErr returns ctx's error in place of the network error its end caused.
func ctxErr(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
