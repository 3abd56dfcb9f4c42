package trace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The errors of the readers.
var (
	// ErrBadTrace is wrapped by every error about a trace's content; the
	// message names the line.
	ErrBadTrace = errors.New("trace: bad trace")
	// ErrFormat is returned for a format name kolco does not know, and
	// by Detect for input it cannot tell the format of.
	ErrFormat = errors.New("trace: unknown trace format")
	// ErrVersion is returned for a kolco trace of a version this reader
	// does not read.
	ErrVersion = errors.New("trace: unsupported kolco trace version")
)

// Op is what a request does to its key.
type Op uint8

// The operations.
const (
	// Other is a request that neither reads, writes nor deletes the
	// value (TOUCH, EXPIRE, TYPE), or one whose effect is unknown.
	Other Op = iota
	// Read fetches the value: a cache's hit or miss.
	Read
	// Write stores or changes the value.
	Write
	// Delete removes the key.
	Delete
)

// String returns the operation's name.
func (o Op) String() string {
	switch o {
	case Read:
		return "read"
	case Write:
		return "write"
	case Delete:
		return "delete"
	}
	return "other"
}

// Result is what a read found, when the trace says.
type Result uint8

// The results.
const (
	// Unknown is a request whose outcome the trace does not say.
	Unknown Result = iota
	// Hit is a read that found the key.
	Hit
	// Miss is a read that did not.
	Miss
)

// String returns the result as the kolco format writes it.
func (r Result) String() string {
	switch r {
	case Hit:
		return "hit"
	case Miss:
		return "miss"
	}
	return "-"
}

// Request is one request of a trace: for a command that names several
// keys, one of them.
type Request struct {
	// Time is when the server received the request, in nanoseconds since
	// the Unix epoch (the Twitter traces: since the trace began).
	Time int64
	// Key is the key, decoded: any bytes.
	Key string
	// KeySize is the key's length in the traffic where the trace says it
	// differs from len(Key) (an anonymized trace); 0 means len(Key).
	KeySize int
	// Size is the value's length in bytes, -1 when the trace does not say.
	Size int64
	// Command is the command's name, lowercase: "get", "set", "hget",
	// "item_get" for a memcached fetch.
	Command string
	// Op is what the command does to the key.
	Op Op
	// Result is what a read found, where the trace says.
	Result Result
}

// Reader reads a trace request by request.
type Reader interface {
	// Next returns the next request, or io.EOF after the last one. An
	// error about the input wraps ErrBadTrace and names its line; after
	// an error, Next returns it again.
	Next() (Request, error)
	// Stats returns what the reader has left out so far.
	Stats() Stats
}

// Stats counts what a reader read but did not return as requests.
type Stats struct {
	// Lines is the lines read.
	Lines int64
	// Keyless counts commands that name no key (PING, INFO, SELECT,
	// MULTI); Internal counts commands a server ran for itself (the
	// commands of a Redis script), which its clients did not send.
	Keyless, Internal int64
	// Lost counts the requests the source says it dropped from the
	// capture (memcached's "skipped" lines when the watcher fell behind).
	Lost int64
	// Oversize counts keys longer than 1 MiB, which are left out: no
	// memcached takes one (250 bytes at most), and no Redis should.
	Oversize int64
}

// Format names a trace format.
type Format string

// The formats.
const (
	// Auto detects the format from the first lines ([Detect]).
	Auto Format = "auto"
	// Kolco is kolco's own trace format (docs/trace.md).
	Kolco Format = "kolco"
	// Monitor is redis-cli MONITOR output.
	Monitor Format = "monitor"
	// Watch is memcached's `watch fetchers mutations` stream.
	Watch Format = "watch"
	// Twitter is the Twitter cache-trace CSV.
	Twitter Format = "twitter"
)

// Formats lists the formats a trace may be read in, Auto first.
func Formats() []Format { return []Format{Auto, Kolco, Monitor, Watch, Twitter} }

// ParseFormat returns the format called name. The error wraps ErrFormat
// and lists the formats.
func ParseFormat(name string) (Format, error) {
	for _, f := range Formats() {
		if strings.EqualFold(name, string(f)) {
			return f, nil
		}
	}
	var names []string
	for _, f := range Formats() {
		names = append(names, string(f))
	}
	return "", fmt.Errorf("%w %q (known: %s)", ErrFormat, name, strings.Join(names, ", "))
}

// detectBytes is how much of a trace Detect reads.
const detectBytes = 64 << 10

// Open returns a reader of r in format f, detecting it first for Auto.
// The error wraps ErrFormat for a format it does not know or cannot
// detect, or ErrVersion for a kolco trace of another version.
func Open(r io.Reader, f Format) (Reader, error) {
	br := bufio.NewReaderSize(r, detectBytes)
	if f == Auto || f == "" {
		head, err := br.Peek(detectBytes)
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
		if f, err = Detect(head); err != nil {
			return nil, err
		}
	}
	switch f {
	case Kolco:
		return newKolcoReader(br)
	case Monitor:
		return newMonitorReader(br), nil
	case Watch:
		return newWatchReader(br), nil
	case Twitter:
		return newTwitterReader(br), nil
	}
	_, err := ParseFormat(string(f))
	return nil, err
}

// Detect returns the format of a trace from its first bytes: a kolco
// header, a MONITOR line (a time, then "[DB CLIENT]"), a watch line
// ("ts=... gid=..."), or a line of seven comma-separated fields. The
// replies redis-cli and memcached send before the stream ("OK") are passed
// over. The error wraps ErrFormat and quotes the first line.
func Detect(head []byte) (Format, error) {
	first := ""
	for line := range bytes.Lines(head) {
		l := strings.TrimRight(string(line), "\r\n")
		if l == "" || l == "OK" {
			continue
		}
		if first == "" {
			first = l
		}
		switch {
		case strings.HasPrefix(l, kolcoMagic):
			return Kolco, nil
		case strings.HasPrefix(l, "ts=") && strings.Contains(l, " gid="):
			return Watch, nil
		case isMonitorLine(l):
			return Monitor, nil
		case strings.Count(l, ",") >= twitterFields-1:
			return Twitter, nil
		}
		break
	}
	if len(first) > 80 {
		first = first[:80] + "..."
	}
	return "", fmt.Errorf("%w: the first line %q is none of kolco's trace, redis-cli MONITOR, memcached's watch or a Twitter cache-trace CSV; name it with a format", ErrFormat, first)
}

// isMonitorLine reports whether l starts as a MONITOR line: a time with a
// fraction, a space and "[".
func isMonitorLine(l string) bool {
	ts, rest, ok := strings.Cut(l, " ")
	if !ok || !strings.HasPrefix(rest, "[") {
		return false
	}
	sec, frac, ok := strings.Cut(ts, ".")
	return ok && sec != "" && frac != "" && strings.Trim(sec+frac, "0123456789") == ""
}

// badLine returns an error about line n wrapping ErrBadTrace.
func badLine(n int64, format string, args ...any) error {
	return fmt.Errorf("%w: line %d: %s", ErrBadTrace, n, fmt.Sprintf(format, args...))
}
