package memcache

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/kolco-dev/kolco/proxy/internal/wire"
)

// Reader reads requests from a client stream.
type Reader struct {
	wire.Input // Buffered, Unread, Wait
	br         *bufio.Reader
	lim        Limits
	line       []byte // accumulates a line longer than the bufio buffer
	tokens     [][]byte
}

// NewReader returns a Reader over r with the given limits.
func NewReader(r io.Reader, lim Limits) *Reader {
	br := bufio.NewReaderSize(r, 16<<10)
	return &Reader{Input: wire.NewInput(br), br: br, lim: lim.withDefaults()}
}

// MaxServerLine is the longest command line, without its \r\n, that
// memcached reads whole whatever the command: it closes a connection on
// which more than 2048 bytes arrive with no end of line, unless the line
// starts with "get " or "gets ". Longer lines of other commands are
// refused and the client's connection closed, as memcached would close it;
// forwarded, they would cost every request in flight on the shared server
// connection.
const MaxServerLine = 2046

// readLine returns the next line without its \r\n or \n, and whether it
// is longer than the buffer (then it lies in r.line). The slice is valid
// until the next read.
func (r *Reader) readLine() ([]byte, bool, error) {
	b, err := r.br.ReadSlice('\n')
	if err == nil {
		return trimEOL(b), false, nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		if len(b) > 0 && errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, false, err
	}
	r.line = r.line[:0]
	for {
		if len(r.line)+len(b)-2 > r.lim.MaxLine { // the line end is not counted
			return nil, false, &Error{Err: ErrLineTooLong, Reply: "CLIENT_ERROR line too long\r\n", Close: true}
		}
		if r.lim.Budget != nil {
			if err := r.lim.Budget.Reserve(len(b)); err != nil {
				return nil, false, &Error{Err: fmt.Errorf("%w: %w", ErrNoRoom, err),
					Reply: "SERVER_ERROR out of memory reading request\r\n", Close: true}
			}
		}
		r.line = append(r.line, b...)
		if err == nil {
			return trimEOL(r.line), true, nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, false, err
		}
		b, err = r.br.ReadSlice('\n')
	}
}

func trimEOL(b []byte) []byte {
	b = b[:len(b)-1]
	if len(b) > 0 && b[len(b)-1] == '\r' {
		b = b[:len(b)-1]
	}
	return b
}

// tokenize splits line on spaces into r.tokens.
func (r *Reader) tokenize(line []byte) [][]byte {
	t := r.tokens[:0]
	for len(line) > 0 {
		i := bytes.IndexByte(line, ' ')
		if i < 0 {
			t = append(t, line)
			break
		}
		if i > 0 {
			t = append(t, line[:i])
		}
		line = line[i+1:]
	}
	r.tokens = t
	return t
}

// Read reads the next request into req. At the end of the stream it
// returns io.EOF; a stream cut inside a request gives
// io.ErrUnexpectedEOF. Protocol errors are [*Error] values; after one
// without Close set the next request can be read.
func (r *Reader) Read(req *Request) error {
	line, long, err := r.readLine()
	if err != nil {
		return err
	}
	req.reset()
	// The request keeps its own copy of the line so that its keys stay
	// valid while the reader moves on to the next request. A long line is
	// handed over rather than copied: the reader takes the request's old
	// buffer in exchange.
	if long {
		r.line, req.line = req.line[:0], line
	} else {
		req.line = append(req.line, line...)
	}
	tok := r.tokenize(req.line)
	if len(tok) == 0 {
		return &Error{Err: ErrUnknownCommand, Reply: "ERROR\r\n"}
	}
	req.Cmd = lookupCommand(tok[0])
	if len(line) > MaxServerLine && req.Cmd != CmdGet && req.Cmd != CmdGets {
		return &Error{Err: ErrLineTooLong, Reply: "CLIENT_ERROR line too long\r\n", Close: true}
	}
	args := tok[1:]
	switch {
	case req.Cmd.IsRetrieval():
		return r.parseRetrieval(req, args)
	case req.Cmd == CmdMetaSet:
		return r.parseMetaSet(req, args)
	case req.Cmd.IsStorage():
		return r.parseStorage(req, args)
	case req.Cmd.IsMeta():
		return r.parseMeta(req, args)
	case req.Cmd == CmdUnknown:
		return &Error{Err: ErrUnknownCommand, Reply: "ERROR\r\n"}
	}
	return r.parseOther(req, args)
}

func (req *Request) reset() {
	req.Trim()
	*req = Request{Keys: req.Keys[:0], Data: req.Data[:0], Args: req.Args[:0],
		keybuf: req.keybuf[:0], line: req.line[:0]}
}

// keepMax is the largest buffer a Request keeps for reuse.
const keepMax = 64 << 10

// Trim drops the buffers of req that a large request grew past 64 KiB, so
// that a Request kept for reuse does not hold a large value's memory; the
// request is then no longer valid. Smaller buffers are kept.
func (req *Request) Trim() {
	if cap(req.Data) > keepMax {
		req.Data = nil
	}
	if cap(req.line) > keepMax {
		req.line = nil
	}
	if cap(req.Keys) > keepMax/8 {
		req.Keys = nil
	}
}

func lookupCommand(b []byte) Command {
	// A switch on string(b) does not allocate.
	switch string(b) {
	case "get":
		return CmdGet
	case "gets":
		return CmdGets
	case "gat":
		return CmdGat
	case "gats":
		return CmdGats
	case "set":
		return CmdSet
	case "add":
		return CmdAdd
	case "replace":
		return CmdReplace
	case "append":
		return CmdAppend
	case "prepend":
		return CmdPrepend
	case "cas":
		return CmdCas
	case "delete":
		return CmdDelete
	case "incr":
		return CmdIncr
	case "decr":
		return CmdDecr
	case "touch":
		return CmdTouch
	case "version":
		return CmdVersion
	case "quit":
		return CmdQuit
	case "flush_all":
		return CmdFlushAll
	case "stats":
		return CmdStats
	case "verbosity":
		return CmdVerbosity
	case "mg":
		return CmdMetaGet
	case "ms":
		return CmdMetaSet
	case "md":
		return CmdMetaDelete
	case "ma":
		return CmdMetaArithmetic
	case "mn":
		return CmdMetaNoop
	case "me":
		return CmdMetaDebug
	}
	return CmdUnknown
}

// badFormat returns memcached's reply to a malformed command line.
func badFormat() *Error { return clientError(ErrBadCommand, "bad command line format") }

func checkKey(k []byte) *Error {
	if len(k) > MaxKeyLen {
		return clientError(ErrKeyTooLong, "bad command line format")
	}
	return nil
}

func (r *Reader) parseRetrieval(req *Request, args [][]byte) error {
	if req.Cmd == CmdGat || req.Cmd == CmdGats {
		if len(args) < 1 {
			return badFormat()
		}
		exp, ok := parseInt(args[0])
		if !ok {
			return clientError(ErrBadCommand, "invalid exptime argument")
		}
		req.Exptime = exp
		args = args[1:]
	}
	if len(args) == 0 {
		return &Error{Err: ErrUnknownCommand, Reply: "ERROR\r\n"}
	}
	if r.lim.MaxKeys > 0 && len(args) > r.lim.MaxKeys {
		return clientError(ErrBadCommand, "too many keys")
	}
	for _, k := range args {
		if e := checkKey(k); e != nil {
			return e
		}
	}
	req.Keys = append(req.Keys, args...)
	return nil
}

// parseStorage parses "cmd key flags exptime bytes [cas] [noreply]" and
// reads the data block. A malformed line closes the stream: its data block
// would otherwise be read as commands.
func (r *Reader) parseStorage(req *Request, args [][]byte) error {
	want := 4
	if req.Cmd == CmdCas {
		want = 5
	}
	if len(args) != want && !(len(args) == want+1 && isNoreply(args[want])) {
		return closing(badFormat())
	}
	flags, ok1 := wire.ParseUint(args[1])
	exp, ok2 := parseInt(args[2])
	n, ok3 := wire.ParseUint(args[3])
	if !ok1 || !ok2 || !ok3 || flags > math.MaxUint32 || n > math.MaxInt32 {
		return closing(badFormat())
	}
	if req.Cmd == CmdCas {
		cas, ok := wire.ParseUint(args[4])
		if !ok {
			return closing(badFormat())
		}
		req.Cas = cas
	}
	req.Noreply = len(args) == want+1
	if e := checkKey(args[0]); e != nil {
		// memcached answers CLIENT_ERROR and keeps the connection, then
		// reads the data block as a command line (ERROR, or worse: a
		// value "flush_all" would run). The block is read and dropped
		// here, so that the request gets the one reply its client waits
		// for and no value is ever run as a command.
		if err := r.skipData(int(n)); err != nil {
			return err
		}
		return e
	}
	req.Keys = append(req.Keys, args[0])
	req.Flags, req.Exptime = uint32(flags), exp
	return r.readData(req, int(n))
}

func closing(e *Error) *Error {
	c := *e
	c.Close = true
	return &c
}

// readData reads an n-byte data block and its \r\n into req.Data. A block
// over the limit is read and dropped, as memcached does, so that the stream
// stays in step.
func (r *Reader) readData(req *Request, n int) error {
	if n > r.lim.MaxValue {
		if err := r.skipData(n); err != nil {
			return err
		}
		return &Error{Err: ErrTooLarge, Reply: "SERVER_ERROR object too large for cache\r\n"}
	}
	if r.lim.Budget != nil {
		if err := r.lim.Budget.Reserve(n); err != nil {
			if err := r.skipData(n); err != nil {
				return err
			}
			return &Error{Err: fmt.Errorf("%w: %w", ErrNoRoom, err), Reply: "SERVER_ERROR out of memory storing object\r\n"}
		}
	}
	if cap(req.Data) < n {
		req.Data = make([]byte, n)
	}
	req.Data = req.Data[:n]
	if _, err := io.ReadFull(r.br, req.Data); err != nil {
		return wire.Unexpected(err)
	}
	return r.expectCRLF()
}

// skipData reads and drops an n-byte data block and its \r\n.
func (r *Reader) skipData(n int) error {
	if _, err := r.br.Discard(n); err != nil {
		return wire.Unexpected(err)
	}
	return r.expectCRLF()
}

func (r *Reader) expectCRLF() error {
	c, err := r.br.ReadByte()
	if err == nil && c == '\r' {
		c, err = r.br.ReadByte()
	}
	if err != nil {
		return wire.Unexpected(err)
	}
	if c != '\n' {
		return &Error{Err: ErrBadDataChunk, Reply: "CLIENT_ERROR bad data chunk\r\n", Close: true}
	}
	return nil
}

func isNoreply(b []byte) bool { return string(b) == "noreply" }

func (r *Reader) parseOther(req *Request, args [][]byte) error {
	n := len(args)
	if n > 0 && isNoreply(args[n-1]) && req.Cmd != CmdStats {
		req.Noreply = true
		n--
	}
	switch req.Cmd {
	case CmdDelete:
		// "delete key 0" is still accepted by memcached for old clients.
		if n < 1 || n > 2 || (n == 2 && string(args[1]) != "0") {
			return badFormat()
		}
	case CmdIncr, CmdDecr:
		if n != 2 {
			return badFormat()
		}
		d, ok := wire.ParseUint(args[1])
		if !ok {
			return clientError(ErrBadCommand, "invalid numeric delta argument")
		}
		req.Delta = d
	case CmdTouch:
		if n != 2 {
			return badFormat()
		}
		exp, ok := parseInt(args[1])
		if !ok {
			return clientError(ErrBadCommand, "invalid exptime argument")
		}
		req.Exptime = exp
	case CmdVersion, CmdQuit:
		if n != 0 {
			return &Error{Err: ErrUnknownCommand, Reply: "ERROR\r\n"}
		}
		return nil
	case CmdVerbosity:
		if n == 0 { // memcached wants a level
			return &Error{Err: ErrUnknownCommand, Reply: "ERROR\r\n"}
		}
		req.Args = append(req.Args, args[:n]...)
		return nil
	default: // stats and flush_all keep their arguments
		req.Args = append(req.Args, args[:n]...)
		return nil
	}
	if e := checkKey(args[0]); e != nil {
		return e
	}
	req.Keys = append(req.Keys, args[0])
	return nil
}

// parseInt parses a decimal int64 with an optional leading minus.
func parseInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	u, ok := wire.ParseUint(b)
	if !ok || u > math.MaxInt64 {
		return 0, false
	}
	if neg {
		return -int64(u), true
	}
	return int64(u), true
}
