package memcache

import (
	"encoding/base64"
	"errors"
	"math"

	"github.com/kolco-dev/kolco/proxy/internal/wire"
)

// parseMeta parses mg, md, ma, mn and me: "cmd key flag*".
func (r *Reader) parseMeta(req *Request, args [][]byte) error {
	if req.Cmd == CmdMetaNoop {
		return nil
	}
	if len(args) < 1 { // memcached: too few tokens
		return &Error{Err: ErrUnknownCommand, Reply: "ERROR\r\n"}
	}
	return r.metaKeyFlags(req, args[0], args[1:], 2)
}

// parseMetaSet parses "ms key datalen flag*" and reads the data block.
func (r *Reader) parseMetaSet(req *Request, args [][]byte) error {
	if len(args) < 2 {
		return closing(badFormat())
	}
	n, ok := wire.ParseUint(args[1])
	if !ok || n > math.MaxInt32 {
		return closing(badFormat())
	}
	if err := r.metaKeyFlags(req, args[0], args[2:], 3); err != nil {
		var e *Error
		if !errors.As(err, &e) {
			return err
		}
		// The data block follows whatever the flags were: drop it, so
		// that the stream stays in step and the block is never read as
		// a command.
		if err := r.skipData(int(n)); err != nil {
			return err
		}
		return e
	}
	return r.readData(req, int(n))
}

// metaMaxTokens is memcached's limit on the tokens of a meta command
// (MFLAG_MAX_OPT_LENGTH): the command, the key, ms's length and the flags,
// plus one. A longer line gets an error from memcached, which then reads
// an ms data block as commands, so the proxy refuses it itself.
const metaMaxTokens = 20

// metaKeyFlags parses a meta command's key and flags; fixed is the number of
// tokens before the flags. memcached knows a flag by its first character
// alone ("qq" is q, "bx" is b), so the proxy does too: a quiet or base64
// flag it did not see would change what memcached answers, and whose
// reply the proxy hands to which client.
func (r *Reader) metaKeyFlags(req *Request, key []byte, flags [][]byte, fixed int) error {
	if fixed+len(flags)+1 > metaMaxTokens {
		return clientError(ErrBadCommand, "options flags are too long")
	}
	var seen [128]bool
	for _, f := range flags {
		switch {
		case len(f) == 0 || !isFlagChar(f[0]):
			return clientError(ErrBadCommand, "invalid flag")
		case seen[f[0]]:
			return clientError(ErrBadCommand, "duplicate flag")
		}
		seen[f[0]] = true
		switch f[0] {
		case 'q':
			req.Noreply = true
			continue
		case 'b':
			req.Base64 = true
		}
		req.Args = append(req.Args, f)
	}
	if req.Base64 {
		n := base64.StdEncoding.DecodedLen(len(key))
		if cap(req.keybuf) < n {
			req.keybuf = make([]byte, n)
		}
		m, err := base64.StdEncoding.Decode(req.keybuf[:n], key)
		if err != nil || m == 0 {
			return clientError(ErrBadCommand, "error decoding key")
		}
		req.keybuf = req.keybuf[:m]
		if m > MaxKeyLen {
			return clientError(ErrKeyTooLong, "bad command line format")
		}
	} else if e := checkKey(key); e != nil {
		return e
	}
	if len(key) == 0 {
		return badFormat()
	}
	req.Keys = append(req.Keys, key)
	return nil
}

func isFlagChar(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
