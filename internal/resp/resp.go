// Package resp is a small client of Redis's protocol (RESP2, and RESP3's
// null): commands as arrays of bulk strings, replies read as values. It
// is for the few conversations kolco's own packages have with Redis and
// Sentinel outside the proxy, which has a codec of its own.
package resp

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

// ErrProtocol is wrapped by every error about a reply that is not RESP.
var ErrProtocol = errors.New("resp: bad reply")

// Error is a server's error reply, such as "NOAUTH Authentication
// required.".
type Error string

func (e Error) Error() string { return string(e) }

// Value is one reply.
type Value struct {
	// Kind is the reply's type byte: '+' status, ':' integer, '$' bulk
	// string, '*' array; a nil bulk string or array, or RESP3's null, has
	// Nil set.
	Kind  byte
	Nil   bool
	Str   string // a status or bulk string
	Int   int64
	Elems []Value
}

// Strings returns an array's elements as strings: its bulk strings and
// statuses, "" for a nil one; false when v is not an array of them.
func (v Value) Strings() ([]string, bool) {
	if v.Kind != '*' || v.Nil {
		return nil, false
	}
	out := make([]string, len(v.Elems))
	for i, e := range v.Elems {
		if e.Kind != '$' && e.Kind != '+' {
			return nil, false
		}
		out[i] = e.Str
	}
	return out, true
}

// Limits of a reply, against a server that sends no end.
const (
	maxBulk  = 512 << 20
	maxElems = 1 << 20
	maxDepth = 8
)

// Conn is a connection to a server. It is not safe for concurrent use.
type Conn struct {
	c  net.Conn
	br *bufio.Reader
	bw *bufio.Writer
}

// Dial connects to addr over TCP, within ctx.
func Dial(ctx context.Context, addr string) (*Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return NewConn(c), nil
}

// NewConn returns a Conn over c.
func NewConn(c net.Conn) *Conn {
	return &Conn{c: c, br: bufio.NewReader(c), bw: bufio.NewWriter(c)}
}

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

// SetDeadline sets the connection's deadline for reads and writes.
func (c *Conn) SetDeadline(t time.Time) error { return c.c.SetDeadline(t) }

// Do sends a command and reads its reply. A server's error reply is
// returned as an [Error].
func (c *Conn) Do(args ...string) (Value, error) {
	if err := c.Send(args...); err != nil {
		return Value{}, err
	}
	return c.Receive()
}

// Send writes a command without reading its reply.
func (c *Conn) Send(args ...string) error {
	WriteCommand(c.bw, args...)
	return c.bw.Flush()
}

// WriteCommand writes args to w as a command, an array of bulk strings,
// without flushing: commands written one after another are pipelined.
func WriteCommand(w *bufio.Writer, args ...string) {
	w.WriteString("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		w.WriteString("$" + strconv.Itoa(len(a)) + "\r\n" + a + "\r\n")
	}
}

// Receive reads one reply: of a command sent, or a message of a
// subscription. A server's error reply is returned as an [Error].
func (c *Conn) Receive() (Value, error) { return Read(c.br) }

// Read reads one reply from br.
func Read(br *bufio.Reader) (Value, error) { return read(br, 0) }

func read(br *bufio.Reader, depth int) (Value, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		if errors.Is(err, io.EOF) && line != "" {
			err = io.ErrUnexpectedEOF
		}
		return Value{}, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return Value{}, fmt.Errorf("%w: line %q", ErrProtocol, line)
	}
	kind, rest := line[0], line[1:len(line)-2]
	switch kind {
	case '+':
		return Value{Kind: '+', Str: rest}, nil
	case '-':
		return Value{}, Error(rest)
	case ':':
		n, err := strconv.ParseInt(rest, 10, 64)
		if err != nil {
			return Value{}, fmt.Errorf("%w: integer %q", ErrProtocol, rest)
		}
		return Value{Kind: ':', Int: n}, nil
	case '_':
		if rest != "" {
			return Value{}, fmt.Errorf("%w: null %q", ErrProtocol, rest)
		}
		return Value{Kind: '$', Nil: true}, nil
	case '$':
		return readBulk(br, rest)
	case '*':
		n, err := length(rest, maxElems)
		if err != nil || n < 0 {
			return Value{Kind: '*', Nil: true}, err
		}
		if depth >= maxDepth {
			return Value{}, fmt.Errorf("%w: arrays nested deeper than %d", ErrProtocol, maxDepth)
		}
		v := Value{Kind: '*', Elems: make([]Value, 0, min(n, 64))}
		for range n {
			e, err := read(br, depth+1)
			if err != nil {
				return Value{}, err
			}
			v.Elems = append(v.Elems, e)
		}
		return v, nil
	}
	return Value{}, fmt.Errorf("%w: type %q", ErrProtocol, kind)
}

// readBulk reads the rest of a bulk string whose header line gave rest.
func readBulk(br *bufio.Reader, rest string) (Value, error) {
	n, err := length(rest, maxBulk)
	if err != nil || n < 0 {
		return Value{Kind: '$', Nil: true}, err
	}
	var b bytes.Buffer // grows with what arrives, not with n
	if _, err := io.CopyN(&b, br, n+2); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return Value{}, err
	}
	s := b.Bytes()
	if s[n] != '\r' || s[n+1] != '\n' {
		return Value{}, fmt.Errorf("%w: a bulk string not ended by CRLF", ErrProtocol)
	}
	return Value{Kind: '$', Str: string(s[:n])}, nil
}

// length parses a bulk string's or an array's length: -1 (nil) up to
// limit.
func length(s string, limit int64) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < -1 || n > limit {
		return 0, fmt.Errorf("%w: length %q", ErrProtocol, s)
	}
	return n, nil
}
