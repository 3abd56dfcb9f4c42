package haproxy

// HeaderValue returns the part of an HTTP header value that `balance
// hdr(name)` hashes: the first element of the comma-separated list (a comma
// inside a double-quoted string does not count), without surrounding blanks
// (space, tab, CR, LF). It shares v's memory. HAProxy falls back to round
// robin when the result is empty, which Index does not model.
func HeaderValue(v []byte) []byte {
	for len(v) > 0 && isLWS(v[0]) {
		v = v[1:]
	}
	end, quoted, pair := len(v), false, false
scan:
	for i, c := range v {
		switch {
		case pair:
			pair = false
		case quoted && c == '\\':
			pair = true
		case c == '"':
			quoted = !quoted
		case !quoted && c == ',':
			end = i
			break scan
		}
	}
	v = v[:end]
	for len(v) > 0 && isLWS(v[len(v)-1]) {
		v = v[:len(v)-1]
	}
	return v
}

func isLWS(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
