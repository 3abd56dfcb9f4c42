package nginx

import (
	"fmt"

	"github.com/kolco-dev/kolco"
)

// Block is one upstream block of a whole configuration, as [ParseConfig]
// finds it.
type Block struct {
	// Name is the upstream's name; empty for a text of bare directives.
	Name string
	// Text is the block from "upstream" to its closing brace.
	Text string
}

// Upstream reads the block with [ParseUpstream]. A block is read only
// when asked for, so that a configuration whose other upstreams use what
// this package does not model (backup servers, say) can still be used.
func (b Block) Upstream() (Upstream, error) {
	u, err := ParseUpstream(b.Text)
	if err != nil && b.Name != "" {
		return u, fmt.Errorf("upstream %s: %w", b.Name, err)
	}
	return u, err
}

// ParseConfig finds the upstream blocks of a whole nginx configuration
// (nginx.conf, or a file it includes), in the http and stream contexts
// alike, in order. A text without any upstream block is read as the
// directives of one unnamed upstream, as [ParseUpstream] reads them.
// Comments and quoted strings are read as nginx reads them, so that a brace
// or a "#" in a quoted string does not count; include directives are not
// followed. The error wraps [kolco.ErrBadConfig] for unbalanced braces or
// an unterminated quoted string.
func ParseConfig(text string) ([]Block, error) {
	toks, err := tokens(text)
	if err != nil {
		return nil, err
	}
	var blocks []Block
	depth, stmt := 0, 0 // stmt: index of the first token of the statement
	for i, tk := range toks {
		switch tk.kind {
		case ';':
			stmt = i + 1
		case '}':
			if depth--; depth < 0 {
				return nil, fmt.Errorf("%w: nginx: unexpected \"}\" at byte %d", kolco.ErrBadConfig, tk.start)
			}
			stmt = i + 1
		case '{':
			if i-stmt == 2 && toks[stmt].text == "upstream" && toks[stmt+1].kind == 'w' {
				end, err := closing(toks, i)
				if err != nil {
					return nil, err
				}
				blocks = append(blocks, Block{Name: toks[stmt+1].text, Text: text[toks[stmt].start:end]})
			}
			depth++
			stmt = i + 1
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("%w: nginx: %d unclosed \"{\"", kolco.ErrBadConfig, depth)
	}
	if len(blocks) == 0 {
		blocks = []Block{{Text: text}}
	}
	return blocks, nil
}

// closing returns the byte offset just past the brace that closes the one
// at toks[open].
func closing(toks []token, open int) (int, error) {
	depth := 0
	for _, tk := range toks[open:] {
		switch tk.kind {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return tk.start + 1, nil
			}
		}
	}
	return 0, fmt.Errorf("%w: nginx: unclosed \"{\" at byte %d", kolco.ErrBadConfig, toks[open].start)
}

// token is a word ('w', with quotes removed) or one of ';', '{', '}'.
type token struct {
	kind  byte
	text  string
	start int
}

// tokens splits text as nginx's ngx_conf_read_token does: a "#" at the
// start of a token comments out the rest of the line; "..." and '...' are
// words with backslash escapes; a word ends at white space, ";" or "{"
// (but "${" is part of a variable).
func tokens(text string) ([]token, error) {
	var out []token
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			i++
		case c == '#':
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case c == ';' || c == '{' || c == '}':
			out = append(out, token{kind: c, start: i})
			i++
		case c == '"' || c == '\'':
			end := quoteEnd(text, i)
			if end < 0 {
				return nil, fmt.Errorf("%w: nginx: unterminated quoted string at byte %d", kolco.ErrBadConfig, i)
			}
			out = append(out, token{kind: 'w', text: text[i+1 : end], start: i})
			i = end + 1
		default:
			end := wordEnd(text, i)
			out = append(out, token{kind: 'w', text: text[i:end], start: i})
			i = end
		}
	}
	return out, nil
}

// quoteEnd returns the index of the quote that closes the one at text[i],
// or -1.
func quoteEnd(text string, i int) int {
	for j := i + 1; j < len(text); j++ {
		switch text[j] {
		case '\\':
			j++
		case text[i]:
			return j
		}
	}
	return -1
}

// wordEnd returns the index just past the unquoted word starting at
// text[i].
func wordEnd(text string, i int) int {
	for j := i; j < len(text); j++ {
		switch text[j] {
		case '\\':
			j++
		case ' ', '\t', '\r', '\n', ';':
			return j
		case '{':
			if j == i || text[j-1] != '$' {
				return j
			}
		}
	}
	return len(text)
}
