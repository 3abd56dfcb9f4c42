package trace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ErrBadRequest is returned by Writer.Write for a request the kolco format
// cannot hold: a negative time, or a command that is empty or holds a
// byte outside the printable ASCII letters, digits and punctuation.
var ErrBadRequest = errors.New("trace: request cannot be written")

// Writer writes kolco's trace format, version 1 (see [Kolco]): the header
// first, then a line a request. It buffers; Flush writes what is left.
type Writer struct {
	w       *bufio.Writer
	buf     []byte
	started bool
}

// NewWriter returns a Writer to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: bufio.NewWriterSize(w, 64<<10)} }

// Write writes one request, after the header for the first. The command
// is written in lowercase; an unknown size (< 0) is "-". The error wraps
// ErrBadRequest for a request the format cannot hold, or is the
// underlying writer's.
func (w *Writer) Write(r Request) error {
	if r.Time < 0 {
		return fmt.Errorf("%w: time %d is before the epoch", ErrBadRequest, r.Time)
	}
	if r.Command == "" || strings.IndexFunc(r.Command, func(c rune) bool { return c <= ' ' || c >= 0x7f || c == '%' }) >= 0 {
		return fmt.Errorf("%w: command %q is empty or not printable ASCII", ErrBadRequest, r.Command)
	}
	if err := w.header(); err != nil {
		return err
	}
	b := strconv.AppendInt(w.buf[:0], r.Time/1e9, 10)
	b = append(b, '.')
	frac := r.Time % 1e9
	for d := int64(1e8); d > 0; d /= 10 {
		b = append(b, byte('0'+frac/d%10))
	}
	b = append(b, ' ')
	b = appendKey(b, r.Key)
	b = append(b, ' ')
	if r.Size < 0 {
		b = append(b, '-')
	} else {
		b = strconv.AppendInt(b, r.Size, 10)
	}
	b = append(b, ' ')
	b = append(b, strings.ToLower(r.Command)...)
	b = append(b, ' ')
	b = append(b, r.Result.String()...)
	b = append(b, '\n')
	w.buf = b
	_, err := w.w.Write(b)
	return err
}

// Comment writes text as comment lines, after the header if no request
// was written yet: each line of text becomes a line starting with "# ".
// Readers skip them; they say where a trace comes from.
func (w *Writer) Comment(text string) error {
	if err := w.header(); err != nil {
		return err
	}
	for line := range strings.Lines(text) {
		if _, err := w.w.WriteString("# " + strings.TrimRight(line, "\r\n") + "\n"); err != nil {
			return err
		}
	}
	return nil
}

// Flush writes the buffered lines, and the header if no request was
// written, so that an empty trace is still a trace.
func (w *Writer) Flush() error {
	if err := w.header(); err != nil {
		return err
	}
	return w.w.Flush()
}

// header writes the version line and the fields' names, once.
func (w *Writer) header() error {
	if w.started {
		return nil
	}
	w.started = true
	_, err := w.w.WriteString(kolcoMagic + strconv.Itoa(kolcoVersion) + "\n# time key size command result\n")
	return err
}
