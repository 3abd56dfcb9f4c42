package redis

// finder says how a command's keys are found.
type finder uint8

const (
	keysRange       finder = iota // KeyRange alone
	keysEval                      // numkeys at 2, keys after it: EVAL, EVALSHA, FCALL and their _RO forms
	keysStoreNum                  // a destination at 1, numkeys at 2: ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE
	keysZNum                      // numkeys at 1: ZUNION, ZINTER, ZDIFF, ZINTERCARD
	keysCardNum                   // numkeys at 1: SINTERCARD
	keysPopNum                    // numkeys at 1: LMPOP, ZMPOP
	keysSort                      // the key at 1 and a STORE destination: SORT
	keysSortRO                    // the key at 1: SORT_RO (its BY and GET patterns are not keys)
	keysGeo                       // the key at 1 and the STORE and STOREDIST destinations: GEORADIUS(BYMEMBER)
	keysBlockPopNum               // a timeout at 1, numkeys at 2: BLMPOP, BZMPOP
	keysStreams                   // the keys after STREAMS, half of what follows: XREAD, XREADGROUP
	keysNotRead                   // movable keys of a refused command, never read
)

// findKeys fills req.keys with the indexes of its keys. It returns
// redis-server's own reply where a numkeys argument is not a count of the
// arguments that follow, and for MSET and MSETNX without a value for every
// key.
func findKeys(req *Request) error {
	cmd := req.Cmd
	n := len(req.Args)
	switch cmd.keys {
	case keysRange:
		last := cmd.last
		if last < 0 {
			last += n
			if cmd.step > 1 && (last-cmd.first+1)%cmd.step != 0 {
				return arityError(cmd) // a key without its value
			}
		}
		for i := cmd.first; i <= last && i > 0; i += cmd.step {
			req.keys = append(req.keys, int32(i))
		}
	case keysEval:
		return numKeys(req, 2, evalCounts)
	case keysStoreNum:
		req.keys = append(req.keys, 1)
		return numKeys(req, 2, zsetCounts)
	case keysZNum:
		return numKeys(req, 1, zsetCounts)
	case keysCardNum:
		return numKeys(req, 1, cardCounts)
	case keysPopNum:
		return numKeys(req, 1, popCounts)
	case keysSort, keysSortRO:
		req.keys = append(req.keys, 1)
		if cmd.keys == keysSort {
			sortStore(req)
		}
	case keysGeo:
		req.keys = append(req.keys, 1)
		geoStore(req)
	case keysBlockPopNum:
		return numKeys(req, 2, popCounts)
	case keysStreams:
		streamKeys(req)
	}
	return nil
}

// streamKeys adds XREAD's and XREADGROUP's keys, found as redis-server's
// xreadGetKeys finds them: the options before STREAMS skipped (BLOCK and
// COUNT with a value, GROUP with two, NOACK alone), then the first half
// of what follows STREAMS. A request without STREAMS, or with an odd
// number after it, has none: the server answers its error.
func streamKeys(req *Request) {
	at := 0
	for i := 1; i < len(req.Args) && at == 0; i++ {
		switch a := req.Args[i]; {
		case equalFold(a, "block"), equalFold(a, "count"):
			i++
		case equalFold(a, "group"):
			i += 2
		case equalFold(a, "noack"):
		case equalFold(a, "streams"):
			at = i
		default:
			return // a syntax error: the server's to answer
		}
	}
	n := len(req.Args) - at - 1
	if at == 0 || n == 0 || n%2 != 0 {
		return
	}
	for i := at + 1; i <= at+n/2; i++ {
		req.keys = append(req.keys, int32(i))
	}
}

// BlockArg returns the argument of a blocking command that says how long
// it may block, and whether it counts milliseconds (XREAD's and
// XREADGROUP's BLOCK) rather than seconds (the last argument of BLPOP and
// the like, the first of BLMPOP and BZMPOP); blocks is false for an XREAD
// or XREADGROUP without BLOCK, which does not block.
func (r *Request) BlockArg() (arg []byte, millis, blocks bool) {
	switch r.Cmd.keys {
	case keysBlockPopNum:
		return r.Args[1], false, true
	case keysStreams:
		for i := 1; i+1 < len(r.Args) && !equalFold(r.Args[i], "streams"); i++ {
			if equalFold(r.Args[i], "block") {
				return r.Args[i+1], true, true
			}
		}
		return nil, true, false
	}
	return r.Args[len(r.Args)-1], false, true
}

// counts names the family of a numkeys command, whose checks and replies
// differ.
type counts uint8

const (
	evalCounts counts = iota // EVAL and FCALL families
	zsetCounts               // ZUNION, ZINTER, ZDIFF (and STORE), ZINTERCARD
	cardCounts               // SINTERCARD
	popCounts                // LMPOP, ZMPOP
)

// The replies of redis-server 7.0 to a bad numkeys, fixed texts.
var (
	errNotInteger   = replyError(ErrNumKeys, "ERR value is not an integer or out of range", false)
	errKeysGreater  = replyError(ErrNumKeys, "ERR Number of keys can't be greater than number of args", false)
	errKeysNegative = replyError(ErrNumKeys, "ERR Number of keys can't be negative", false)
	errKeysPositive = replyError(ErrNumKeys, "ERR numkeys should be greater than 0", false)
	errKeysSyntax   = replyError(ErrNumKeys, "ERR syntax error", false)
)

// numKeys reads the count at Args[at] and takes that many keys after it,
// answering a bad count as redis-server does for the family.
func numKeys(req *Request, at int, family counts) error {
	v, ok := parseInt(req.Args[at])
	left := int64(len(req.Args) - at - 1)
	switch family {
	case evalCounts:
		switch {
		case !ok:
			return errNotInteger
		case v > left:
			return errKeysGreater
		case v < 0:
			return errKeysNegative
		}
	case zsetCounts:
		switch {
		case !ok:
			return errNotInteger
		case v < 1:
			return replyError(ErrNumKeys, "ERR at least 1 input key is needed for '"+req.Cmd.name+"' command", false)
		case v > left:
			return errKeysSyntax
		}
	case cardCounts, popCounts:
		switch {
		case !ok || v < 1:
			return errKeysPositive
		case v > left && family == cardCounts:
			return errKeysGreater
		case v > left:
			return errKeysSyntax
		}
	}
	for i := at + 1; i <= at+int(v); i++ {
		req.keys = append(req.keys, int32(i))
	}
	return nil
}

// sortStore adds SORT's STORE destination, found as redis-server's
// sortGetKeys finds it: LIMIT skips two arguments, GET and BY one, and the
// last STORE followed by an argument wins.
func sortStore(req *Request) {
	store := 0
	for i := 2; i < len(req.Args); i++ {
		a := req.Args[i]
		switch {
		case equalFold(a, "limit"):
			i += 2
		case equalFold(a, "get"), equalFold(a, "by"):
			i++
		case equalFold(a, "store") && i+1 < len(req.Args):
			store = i + 1
			i++
		}
	}
	if store > 0 {
		req.keys = append(req.keys, int32(store))
	}
}

// geoStore adds GEORADIUS's STORE and STOREDIST destinations. The command
// writes to the last one given; redis-server 7.0's key specs name the
// first STORE and the first STOREDIST. Every one is taken here, so that
// whichever the server uses is on the same server as the others.
func geoStore(req *Request) {
	from := 6 // GEORADIUS key longitude latitude radius unit
	if req.Cmd.name == "georadiusbymember" {
		from = 5 // GEORADIUSBYMEMBER key member radius unit
	}
	for i := from; i+1 < len(req.Args); i++ {
		if a := req.Args[i]; equalFold(a, "store") || equalFold(a, "storedist") {
			i++
			req.keys = append(req.keys, int32(i))
		}
	}
}

// equalFold reports whether a equals the lower-case ASCII word w in any
// case, as C's strcasecmp compares: byte by byte, ASCII letters only
// (strings.EqualFold would also fold Unicode, taking "ſtore" for "store").
func equalFold(a []byte, w string) bool {
	if len(a) != len(w) {
		return false
	}
	for i := 0; i < len(a); i++ {
		c := a[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != w[i] {
			return false
		}
	}
	return true
}

// asciiUpper upper-cases ASCII letters only, byte by byte, as C's toupper
// does (strings.ToUpper would rewrite bytes that are not UTF-8).
func asciiUpper(b []byte) string {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		out[i] = c
	}
	return string(out)
}
