package redis

// splitArgs splits an inline command line into req's arguments as
// redis-server's sdssplitargs does, and returns their number, or false for
// unbalanced quotes. The rules, checked against the real server:
//   - arguments are separated by blanks; leading blanks are C's isspace
//     (space, \t, \n, \v, \f, \r), but inside a bare word only space, \t,
//     \n and \r end it, so "a\vb" is one argument;
//   - "double quotes" take the escapes \xHH (two hex digits), \n, \r, \t,
//     \b, \a, and \c for any other c; 'single quotes' take only \';
//   - a closing quote must be followed by a blank or the end of the line;
//     a quote that never closes is unbalanced;
//   - a quote in the middle of a bare word opens a quoted part of it.
//
// line holds no NUL byte (readLine refuses those), which sdssplitargs
// would take for the end of the string.
func splitArgs(req *Request, line []byte) (int, bool) {
	n := 0
	i := 0
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i == len(line) {
			return n, true
		}
		var ok bool
		i, ok = splitWord(req, line, i)
		if !ok {
			return 0, false
		}
		req.endArg()
		n++
	}
}

// splitWord appends to req.buf the argument that starts at line[i] and
// returns where the scan goes on.
func splitWord(req *Request, line []byte, i int) (int, bool) {
	inDouble, inSingle := false, false
	for {
		if i == len(line) {
			// The end of the line ends a bare word, not a quoted one.
			return i, !inDouble && !inSingle
		}
		c := line[i]
		switch {
		case inDouble:
			switch {
			case c == '\\' && i+3 < len(line) && line[i+1] == 'x' && isHex(line[i+2]) && isHex(line[i+3]):
				req.buf = append(req.buf, hexVal(line[i+2])<<4|hexVal(line[i+3]))
				i += 3
			case c == '\\' && i+1 < len(line):
				i++
				req.buf = append(req.buf, unescape(line[i]))
			case c == '"':
				// The closing quote must be followed by a blank or the end.
				if i+1 < len(line) && !isSpace(line[i+1]) {
					return 0, false
				}
				return i + 1, true
			default:
				req.buf = append(req.buf, c)
			}
		case inSingle:
			switch {
			case c == '\\' && i+1 < len(line) && line[i+1] == '\'':
				i++
				req.buf = append(req.buf, '\'')
			case c == '\'':
				if i+1 < len(line) && !isSpace(line[i+1]) {
					return 0, false
				}
				return i + 1, true
			default:
				req.buf = append(req.buf, c)
			}
		default:
			switch c {
			case ' ', '\n', '\r', '\t':
				return i + 1, true
			case '"':
				inDouble = true
			case '\'':
				inSingle = true
			default:
				req.buf = append(req.buf, c)
			}
		}
		i++
	}
}

// isSpace is C's isspace in the C locale.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func hexVal(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// unescape returns what \c stands for inside double quotes.
func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'a':
		return '\a'
	}
	return c
}
