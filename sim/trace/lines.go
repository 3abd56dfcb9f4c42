package trace

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
	"strconv"
)

// maxLine bounds a line of the line-based formats; MONITOR lines, which
// carry whole values, are read arg by arg instead (monitor.go).
const maxLine = 4 << 20

// lines reads a trace line by line, counting them for error messages.
type lines struct {
	r    *bufio.Reader
	n    int64  // the number of the line last returned
	long []byte // a line longer than the reader's buffer, assembled
	err  error  // sticky
}

// next returns the next line without its line end, valid until the next
// call, or io.EOF. A line over maxLine is an error.
func (l *lines) next() ([]byte, error) {
	if l.err != nil {
		return nil, l.err
	}
	l.long = l.long[:0]
	for {
		b, err := l.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(l.long)+len(b) > maxLine {
				l.err = badLine(l.n+1, "longer than %d bytes", maxLine)
				return nil, l.err
			}
			l.long = append(l.long, b...)
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			l.err = err
			return nil, err
		}
		if len(b) == 0 && len(l.long) == 0 && err != nil {
			l.err = io.EOF
			return nil, io.EOF
		}
		l.n++
		if len(l.long) > 0 {
			if len(l.long)+len(b) > maxLine {
				l.err = badLine(l.n, "longer than %d bytes", maxLine)
				return nil, l.err
			}
			b = append(l.long, b...)
			l.long = b
		}
		b = bytes.TrimSuffix(b, []byte("\n"))
		return bytes.TrimSuffix(b, []byte("\r")), nil
	}
}

// fail makes err the reader's sticky error and returns it.
func (l *lines) fail(err error) error {
	l.err = err
	return err
}

// parseSeconds reads a time "SECONDS[.FRACTION]" as nanoseconds: the
// fraction as decimal digits, up to nine.
func parseSeconds(s []byte) (int64, bool) {
	sec, frac, _ := bytes.Cut(s, []byte("."))
	if len(sec) == 0 || len(frac) > 9 {
		return 0, false
	}
	v, ok := parseSize(sec)
	if !ok || v > maxSeconds {
		return 0, false
	}
	ns := v * 1e9
	for i := range 9 {
		d := int64(0)
		if i < len(frac) {
			if frac[i] < '0' || frac[i] > '9' {
				return 0, false
			}
			d = int64(frac[i] - '0')
		}
		ns += d * pow10[8-i]
	}
	return ns, true
}

// maxSeconds is the latest time a trace may name: its nanoseconds fit
// an int64 (the year 2262).
const maxSeconds = math.MaxInt64/1_000_000_000 - 1

var pow10 = [9]int64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8}

// parseSize reads a non-negative byte count.
func parseSize(s []byte) (int64, bool) {
	if len(s) == 0 || s[0] == '+' || s[0] == '-' {
		return 0, false
	}
	v, err := strconv.ParseInt(string(s), 10, 64)
	return v, err == nil
}
