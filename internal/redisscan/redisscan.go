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
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
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

// maxBulk bounds one key's length in a reply, as Redis bounds a string.
const maxBulk = 512 << 20

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
		writeCommand(w, cmd...)
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
		writeCommand(w, "SCAN", cursor, "COUNT", count)
		if err := w.Flush(); err != nil {
			return err
		}
		next, keys, err := r.scanReply()
		if err != nil {
			return fmt.Errorf("SCAN: %w", err)
		}
		for _, k := range keys {
			writeCommand(w, "MEMORY", "USAGE", k)
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

// writeCommand writes args as a RESP array of bulk strings.
func writeCommand(w *bufio.Writer, args ...string) {
	w.WriteString("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		w.WriteString("$" + strconv.Itoa(len(a)) + "\r\n" + a + "\r\n")
	}
}

// reader reads the few replies the listing needs.
type reader struct{ br *bufio.Reader }

// line reads one reply line without its CRLF.
func (r *reader) line() (string, error) {
	s, err := r.br.ReadString('\n')
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return "", err
	}
	if len(s) < 3 || s[len(s)-2] != '\r' {
		return "", fmt.Errorf("%w: %q", ErrBad, s)
	}
	return s[:len(s)-2], nil
}

// head reads a reply line, turning an error reply into an error.
func (r *reader) head() (byte, string, error) {
	s, err := r.line()
	if err != nil {
		return 0, "", err
	}
	if s[0] == '-' {
		return 0, "", fmt.Errorf("%w: the server answered %q", ErrBad, s[1:])
	}
	return s[0], s[1:], nil
}

// simple reads +OK or another simple string.
func (r *reader) simple() (string, error) {
	t, s, err := r.head()
	if err == nil && t != '+' {
		err = fmt.Errorf("%w: %q where a status was expected", ErrBad, string(t)+s)
	}
	return s, err
}

// length parses a length or integer field.
func length(s string, limit int64) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < -1 || n > limit {
		return 0, fmt.Errorf("%w: length %q", ErrBad, s)
	}
	return n, nil
}

// bulk reads a bulk string; ok is false for a nil one.
func (r *reader) bulk() (string, bool, error) {
	t, s, err := r.head()
	if err != nil {
		return "", false, err
	}
	if t != '$' {
		return "", false, fmt.Errorf("%w: %q where a bulk string was expected", ErrBad, string(t)+s)
	}
	n, err := length(s, maxBulk)
	if err != nil || n < 0 {
		return "", false, err
	}
	// Read as the bytes arrive, so that a length no server sent
	// allocates no more than what is there.
	var b bytes.Buffer
	if _, err := io.CopyN(&b, r.br, n+2); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return "", false, err
	}
	buf := b.Bytes()
	if buf[n] != '\r' || buf[n+1] != '\n' {
		return "", false, fmt.Errorf("%w: a bulk string not ended by CRLF", ErrBad)
	}
	return string(buf[:n]), true, nil
}

// integerOrNil reads an integer, or a nil bulk string (ok false).
func (r *reader) integerOrNil() (int64, bool, error) {
	t, s, err := r.head()
	if err != nil {
		return 0, false, err
	}
	switch {
	case t == ':':
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, false, fmt.Errorf("%w: integer %q", ErrBad, s)
		}
		return n, true, nil
	case t == '$' && s == "-1", t == '_' && s == "":
		return 0, false, nil
	}
	return 0, false, fmt.Errorf("%w: %q where an integer was expected", ErrBad, string(t)+s)
}

// scanReply reads SCAN's reply: the next cursor and the keys.
func (r *reader) scanReply() (string, []string, error) {
	t, s, err := r.head()
	if err != nil {
		return "", nil, err
	}
	if t != '*' || s != "2" {
		return "", nil, fmt.Errorf("%w: %q where SCAN's two-element array was expected", ErrBad, string(t)+s)
	}
	cursor, ok, err := r.bulk()
	if err != nil {
		return "", nil, err
	}
	if _, perr := strconv.ParseUint(cursor, 10, 64); !ok || perr != nil {
		return "", nil, fmt.Errorf("%w: cursor %q", ErrBad, cursor)
	}
	t, s, err = r.head()
	if err != nil {
		return "", nil, err
	}
	if t != '*' {
		return "", nil, fmt.Errorf("%w: %q where SCAN's keys were expected", ErrBad, string(t)+s)
	}
	n, err := length(s, 1<<20)
	if err != nil || n < 0 {
		return "", nil, fmt.Errorf("%w: SCAN's keys: %q", ErrBad, s)
	}
	keys := make([]string, 0, n)
	for range n {
		k, ok, err := r.bulk()
		if err != nil {
			return "", nil, err
		}
		if !ok {
			return "", nil, fmt.Errorf("%w: a nil key in SCAN's reply", ErrBad)
		}
		keys = append(keys, k)
	}
	return cursor, keys, nil
}
