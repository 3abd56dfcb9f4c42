package keys

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

// Metadump lists the items of the memcached server at addr with
// "lru_crawler metadump all" over its text protocol (memcached 1.4.31 and
// later, with the LRU crawler on, its default since 1.5). A server busy
// with another crawl is asked again, waiting longer each time, until ctx
// ends. The error wraps [ErrMetadump] for a reply it cannot read, [ErrBusy]
// when ctx ends while the server is still busy, or is the network's own,
// ctx's error when it ends first.
func Metadump(ctx context.Context, addr string) ([]Item, error) {
	wait := busyRetry
	for busy := false; ; busy = true {
		items, err := metadumpOnce(ctx, addr)
		if busy && err != nil && ctx.Err() != nil {
			// ctx ended during a later attempt: what kept the dump
			// from being read is still the other crawl.
			return nil, fmt.Errorf("%w (%v)", ErrBusy, ctx.Err())
		}
		if !errors.Is(err, ErrBusy) {
			return items, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w (%v)", ErrBusy, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, busyRetryMax)
	}
}

// metadumpOnce asks addr for its items once, on a connection of its own.
func metadumpOnce(ctx context.Context, addr string) ([]Item, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := io.WriteString(conn, "lru_crawler metadump all\r\n"); err != nil {
		return nil, ctxErr(ctx, err)
	}
	items, err := ReadMetadump(bufio.NewReaderSize(conn, 64<<10))
	return items, ctxErr(ctx, err)
}

// ctxErr returns ctx's error in place of the network error its end caused.
func ctxErr(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
