package trace

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// MONITOR lines carry every argument whole, values too, so they are read
// argument by argument rather than as lines: a 100 MB SET costs the
// length of its value, not a 100 MB buffer.

const (
	// maxArg bounds an argument kept whole; past it only its length is
	// kept, which is all a value needs. A key must fit.
	maxArg = 1 << 20
	// maxKept bounds the bytes of one line's arguments kept whole.
	maxKept = 16 << 20
	// maxHead bounds the time and the "[DB CLIENT]" before the arguments.
	maxHead = 1024
)

// monitorReader reads redis-cli MONITOR output.
type monitorReader struct {
	r       *bufio.Reader
	n       int64 // the line being read
	pending []Request
	stats   Stats
	err     error // sticky

	buf  []byte  // the kept arguments, back to back
	ends []int   // args[i] is buf[ends[i-1]:ends[i]]
	lens []int64 // each argument's decoded length, kept or not
}

func newMonitorReader(br *bufio.Reader) *monitorReader { return &monitorReader{r: br} }

func (m *monitorReader) Stats() Stats { return m.stats }

func (m *monitorReader) Next() (Request, error) {
	for len(m.pending) == 0 {
		if m.err != nil {
			return Request{}, m.err
		}
		if err := m.line(); err != nil {
			m.err = err
			return Request{}, err
		}
	}
	r := m.pending[0]
	m.pending = m.pending[1:]
	return r, nil
}

// line reads one line into m.pending, or skips it.
func (m *monitorReader) line() error {
	head, err := m.head()
	if err != nil {
		return err
	}
	if head == nil {
		return io.EOF
	}
	ts, rest, _ := bytes.Cut(head, []byte(" "))
	t, ok := parseSeconds(ts)
	if !ok {
		return badLine(m.n, "time %q is not seconds since the epoch such as 1700000000.123456", clip(ts))
	}
	if len(rest) < 2 || rest[0] != '[' || rest[len(rest)-1] != ']' {
		return badLine(m.n, "want \"TIME [DB CLIENT] \\\"COMMAND\\\" ...\", got %q before the arguments", clip(head))
	}
	_, client, _ := bytes.Cut(rest[1:len(rest)-1], []byte(" "))
	if err := m.args(); err != nil {
		return err
	}
	if len(m.ends) == 0 || m.ends[0] == 0 {
		return badLine(m.n, "no command after %q", clip(head))
	}
	if string(client) == "lua" {
		m.stats.Internal++
		return nil
	}
	m.requests(t)
	return nil
}

// head reads a line's time and "[DB CLIENT]", up to the space before its
// first argument, counting the line; it returns nil at the end, and skips
// blank lines and redis-cli's "OK".
func (m *monitorReader) head() ([]byte, error) {
	for {
		var head []byte
		for {
			c, err := m.r.ReadByte()
			if err == io.EOF && len(head) == 0 {
				return nil, nil
			}
			if err == io.EOF {
				return nil, badLine(m.n+1, "ends after %q, before the command", clip(head))
			}
			if err != nil {
				return nil, err
			}
			if c == '\n' {
				m.n++
				m.stats.Lines = m.n
				if l := bytes.TrimSuffix(head, []byte("\r")); len(l) == 0 || string(l) == "OK" {
					break
				}
				return nil, badLine(m.n, "%q is not a MONITOR line", clip(head))
			}
			if c == ' ' && bytes.HasSuffix(head, []byte("]")) {
				m.n++
				m.stats.Lines = m.n
				return head, nil
			}
			if head = append(head, c); len(head) > maxHead {
				return nil, badLine(m.n+1, "no \"[DB CLIENT]\" in its first %d bytes", maxHead)
			}
		}
	}
}

// args reads the quoted arguments up to the line's end.
func (m *monitorReader) args() error {
	m.buf, m.ends, m.lens = m.buf[:0], m.ends[:0], m.lens[:0]
	for {
		c, err := m.r.ReadByte()
		if err == io.EOF && len(m.ends) > 0 {
			return nil
		}
		if err == io.EOF {
			return badLine(m.n, "ends before the command")
		}
		if err != nil {
			return m.eof(err)
		}
		switch {
		case c == '\n':
			return nil
		case c == '\r' || c == ' ' && len(m.ends) > 0:
		case c == '"':
			if err := m.arg(); err != nil {
				return err
			}
		default:
			return badLine(m.n, "argument %d does not start with a quote", len(m.ends)+1)
		}
	}
}

// arg reads one argument after its opening quote, decoding the escapes
// redis writes (\" \\ \n \r \t \a \b \xHH).
func (m *monitorReader) arg() error {
	start := len(m.buf)
	var n int64
	keep := func(b byte) {
		if n < maxArg && len(m.buf) < maxKept {
			m.buf = append(m.buf, b)
		}
		n++
	}
	for {
		c, err := m.r.ReadByte()
		if err != nil {
			return m.eof(err)
		}
		switch c {
		case '"':
			if n > int64(len(m.buf)-start) { // not kept whole: keep none of it
				m.buf = m.buf[:start]
			}
			m.ends, m.lens = append(m.ends, len(m.buf)), append(m.lens, n)
			return nil
		case '\n':
			return badLine(m.n, "ends inside argument %d", len(m.ends)+1)
		case '\\':
			b, err := m.escape()
			if err != nil {
				return err
			}
			keep(b)
		default:
			keep(c)
		}
	}
}

// escape reads what follows a backslash and returns the byte it stands for.
func (m *monitorReader) escape() (byte, error) {
	c, err := m.r.ReadByte()
	if err != nil {
		return 0, m.eof(err)
	}
	switch c {
	case '"', '\\':
		return c, nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'a':
		return '\a', nil
	case 'b':
		return '\b', nil
	case 'x':
		var h [2]byte
		for i := range h {
			if h[i], err = m.r.ReadByte(); err != nil {
				return 0, m.eof(err)
			}
		}
		if unhex(h[0]) < 0 || unhex(h[1]) < 0 {
			return 0, badLine(m.n, "\\x%s in argument %d is not two hex digits", h[:], len(m.ends)+1)
		}
		return byte(unhex(h[0])<<4 | unhex(h[1])), nil
	}
	return 0, badLine(m.n, "\\%c in argument %d is not an escape redis writes", c, len(m.ends)+1)
}

// eof turns the end of the input inside a line into an error naming it.
func (m *monitorReader) eof(err error) error {
	if errors.Is(err, io.EOF) {
		return badLine(m.n, "ends inside argument %d", len(m.ends)+1)
	}
	return err
}

// requests turns the line's arguments into one request a key.
func (m *monitorReader) requests(t int64) {
	args := make([][]byte, len(m.ends))
	for i := range m.ends {
		lo := 0
		if i > 0 {
			lo = m.ends[i-1]
		}
		args[i] = m.buf[lo:m.ends[i]]
	}
	args[0] = bytes.ToLower(args[0])
	keys, vals := redisKeyArgs(args)
	if len(keys) == 0 {
		m.stats.Keyless++
		return
	}
	cmd := string(args[0])
	op := opOf(cmd)
	for i, k := range keys {
		size := int64(-1)
		if vals[i] >= 0 {
			size = m.lens[vals[i]]
		}
		if int64(len(args[k])) != m.lens[k] {
			m.stats.Oversize++ // a key over maxArg
			continue
		}
		m.pending = append(m.pending, Request{Time: t, Key: string(args[k]), Size: size, Command: cmd, Op: op})
	}
}
