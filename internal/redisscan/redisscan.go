// Package redisscan lists the keys a Redis server holds, each with the
// bytes it takes in the server's memory: SCAN through the keyspace, and
// MEMORY USAGE of each key SCAN returns, pipelined a batch at a time. It
// is what a plan of a Redis store's change reads from the servers, as
// package metadump is for memcached.
//
// SCAN's guarantee is Redis's: every key present for the whole listing is
// listed, at least once; a key written or deleted meanwhile may or may not
// be. A key deleted between SCAN and MEMORY USAGE is left out.
package redisscan

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/kolco-dev/kolco/internal/resp"
)

// Options are how to reach a server's keys.
type Options struct {
	// User and Password, when Password is set, are sent with AUTH before
	// anything else (User empty: AUTH with the password alone).
	User, Password string
	// DB is the database SELECTed before the listing.
	DB int
	// Count is SCAN's COUNT hint, the keys asked for at a time; 0 means
	// 1000.
	Count int
}

// Item is one key with its size.
type Item struct {
	Key string
	// Size is MEMORY USAGE's answer: the key's bytes, value and overhead.
	Size int64
}

// ErrBad is wrapped by every error about a reply that is not what the
// command returns, and by the server's own error replies.
var ErrBad = errors.New("redisscan: unexpected reply")

// List calls each for every key of the server at addr (network "tcp" or
// "unix"), on a connection of its own that it closes before returning.
// An error from each stops the listing and is returned; otherwise the
// error wraps ErrBad, is the network's own, or ctx's when it ends first.
func List(ctx context.Context, network, addr string, o Options, each func(Item) error) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	err = list(conn, o, each)
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

func list(conn io.ReadWriter, o Options, each func(Item) error) error {
	r := &reader{br: bufio.NewReaderSize(conn, 64<<10)}
	w := bufio.NewWriterSize(conn, 64<<10)
	var setup [][]string
	switch {
	case o.Password != "" && o.User != "":
		setup = append(setup, []string{"AUTH", o.User, o.Password})
	case o.Password != "":
		setup = append(setup, []string{"AUTH", o.Password})
	}
	if o.DB != 0 {
		setup = append(setup, []string{"SELECT", strconv.Itoa(o.DB)})
	}
	for _, cmd := range setup {
		resp.WriteCommand(w, cmd...)
		if err := w.Flush(); err != nil {
			return err
		}
		if _, err := r.simple(); err != nil {
			return fmt.Errorf("%s: %w", cmd[0], err)
		}
	}
	count := strconv.Itoa(max(o.Count, 0))
	if o.Count == 0 {
		count = "1000"
	}
	cursor := "0"
	for {
		resp.WriteCommand(w, "SCAN", cursor, "COUNT", count)
		if err := w.Flush(); err != nil {
			return err
		}
		next, keys, err := r.scanReply()
		if err != nil {
			return fmt.Errorf("SCAN: %w", err)
		}
		for _, k := range keys {
			resp.WriteCommand(w, "MEMORY", "USAGE", k)
		}
		if err := w.Flush(); err != nil {
			return err
		}
		for _, k := range keys {
			n, ok, err := r.integerOrNil()
			if err != nil {
				return fmt.Errorf("MEMORY USAGE: %w", err)
			}
			if !ok {
				continue // deleted since SCAN listed it
			}
			if err := each(Item{Key: k, Size: n}); err != nil {
				return err
			}
		}
		if next == "0" {
			return nil
		}
		cursor = next
	}
}

// reader reads the few replies the listing needs, with package resp: an
// error reply, or one that is not RESP, is an error wrapping ErrBad, and a
// reply cut short is io.ErrUnexpectedEOF.
type reader struct{ br *bufio.Reader }

// value reads one reply.
func (r *reader) value() (resp.Value, error) {
	v, err := resp.Read(r.br)
	var re resp.Error
	switch {
	case errors.As(err, &re):
		return v, fmt.Errorf("%w: the server answered %q", ErrBad, string(re))
	case errors.Is(err, resp.ErrProtocol):
		return v, fmt.Errorf("%w: %w", ErrBad, err)
	case errors.Is(err, io.EOF):
		return v, io.ErrUnexpectedEOF // a reply was due
	}
	return v, err
}

// simple reads +OK or another simple string.
func (r *reader) simple() (string, error) {
	v, err := r.value()
	if err == nil && v.Kind != '+' {
		err = fmt.Errorf("%w: a reply of type %q where a status was expected", ErrBad, v.Kind)
	}
	return v.Str, err
}

// integerOrNil reads an integer, or a nil (ok false).
func (r *reader) integerOrNil() (int64, bool, error) {
	v, err := r.value()
	switch {
	case err != nil:
		return 0, false, err
	case v.Kind == ':':
		return v.Int, true, nil
	case v.Nil && v.Kind == '$':
		return 0, false, nil
	}
	return 0, false, fmt.Errorf("%w: a reply of type %q where an integer was expected", ErrBad, v.Kind)
}

// scanReply reads SCAN's reply: the next cursor and the keys.
func (r *reader) scanReply() (string, []string, error) {
	v, err := r.value()
	if err != nil {
		return "", nil, err
	}
	if v.Kind != '*' || v.Nil || len(v.Elems) != 2 {
		return "", nil, fmt.Errorf("%w: a reply of type %q where SCAN's two-element array was expected", ErrBad, v.Kind)
	}
	cur := v.Elems[0]
	if _, perr := strconv.ParseUint(cur.Str, 10, 64); cur.Kind != '$' || cur.Nil || perr != nil {
		return "", nil, fmt.Errorf("%w: cursor %q", ErrBad, cur.Str)
	}
	if ks := v.Elems[1]; ks.Kind != '*' || ks.Nil {
		return "", nil, fmt.Errorf("%w: a reply of type %q where SCAN's keys were expected", ErrBad, ks.Kind)
	}
	keys := make([]string, 0, len(v.Elems[1].Elems))
	for _, k := range v.Elems[1].Elems {
		if k.Kind != '$' || k.Nil {
			return "", nil, fmt.Errorf("%w: a key of type %q, nil %v, in SCAN's reply", ErrBad, k.Kind, k.Nil)
		}
		keys = append(keys, k.Str)
	}
	return cur.Str, keys, nil
}
