package redis

// Request is one parsed client request. Its slices point into memory the
// Request owns, so they stay valid while the Reader reads other requests
// into other Requests, until the next read into the same Request.
type Request struct {
	// Args are the command's arguments as sent, the command name first
	// (in the client's case).
	Args [][]byte
	// Cmd is the command as the table knows it (the subcommand's entry
	// for OBJECT ENCODING and the like). It is nil when the request failed
	// before its command was known.
	Cmd *Command
	// Inline is set for a request sent as an inline command ("GET k\r\n")
	// rather than as an array of bulk strings.
	Inline bool

	keys []int32 // indexes in Args of the keys, in order
	buf  []byte  // the arguments' bytes, back to back
	ends []int   // where each argument ends in buf
}

// NumKeys returns the number of keys of the request.
func (r *Request) NumKeys() int { return len(r.keys) }

// Key returns the i-th key, 0 <= i < NumKeys.
func (r *Request) Key(i int) []byte { return r.Args[r.keys[i]] }

// KeyIndex returns the index in Args of the i-th key.
func (r *Request) KeyIndex(i int) int { return int(r.keys[i]) }

// Size returns the number of bytes of the request's arguments, all of
// them: no one argument is longer.
func (r *Request) Size() int { return len(r.buf) }

func (r *Request) reset() {
	r.Trim()
	r.Args = r.Args[:0]
	r.Cmd = nil
	r.Inline = false
	r.keys = r.keys[:0]
	r.buf = r.buf[:0]
	r.ends = r.ends[:0]
}

// Trim lets go of the memory of a large request once it is done: its
// arguments may still be read by whoever they were passed to (see
// Splitter.AppendPartRef), so the Request never reads into that memory
// again, and a Request kept for reuse, or an idle client, holds none of
// it. A request of at most KeepMax bytes is left as it is.
func (r *Request) Trim() {
	if cap(r.buf) > KeepMax {
		clear(r.Args) // they point into buf
		r.Args, r.buf = r.Args[:0], nil
	}
}

// KeepMax is the largest buffer a Request keeps for its next request.
const KeepMax = 64 << 10

// endArg marks the end of an argument written to buf.
func (r *Request) endArg() { r.ends = append(r.ends, len(r.buf)) }

// finish points Args at the arguments, now that buf will not move.
func (r *Request) finish() {
	start := 0
	for _, end := range r.ends {
		// A full slice expression, so that appending to an argument can
		// never write over the next one.
		r.Args = append(r.Args, r.buf[start:end:end])
		start = end
	}
}
