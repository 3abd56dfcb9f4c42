// Package nodefile reads node lists: one node per line as
// "ID [WEIGHT [ZONE]]", fields separated by ASCII spaces or tabs. Blank
// lines and lines starting with '#' are ignored. IDs may contain ':'
// (host:port names are common) but no spaces, tabs or commas: a comma
// separates IDs wherever a list of them is written on one line, so that
// "cache-a,1" is a mistake for "cache-a 1", not a node.
package nodefile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/nodeset"
)

// ErrBadList is wrapped by every error about the content of a node file:
// a malformed line, a bad weight, an ID listed twice. The message names
// the line.
var ErrBadList = errors.New("nodefile: bad node list")

// ErrSyntax is the name ErrBadList had first.
//
// Deprecated: use ErrBadList; a duplicate ID is not a syntax error.
var ErrSyntax = ErrBadList

// maxLine bounds one line, so that a file without newlines fails with an
// error instead of growing a buffer without limit.
const maxLine = 64 << 10

// Parse reads a node list. The error wraps ErrBadList and names the line
// number for a malformed line, an ID with a comma, a bad weight
// (kolco.ErrBadWeight is wrapped too) or an ID listed twice
// (kolco.ErrDuplicateNode too); read errors are returned as they are. On
// error no nodes are returned.
func Parse(r io.Reader) ([]kolco.Node, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	var nodes []kolco.Node
	seen := map[string]int{}
	for line := 1; sc.Scan(); line++ {
		text := strings.Trim(sc.Text(), blanks+"\r")
		if text == "" || text[0] == '#' {
			continue
		}
		n, err := parseLine(text)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %w", ErrBadList, line, err)
		}
		if first, dup := seen[n.ID]; dup {
			return nil, fmt.Errorf("%w: line %d: %w: %q (first on line %d)", ErrBadList, line, kolco.ErrDuplicateNode, n.ID, first)
		}
		seen[n.ID] = line
		nodes = append(nodes, n)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%w: a line is longer than %d bytes", ErrBadList, maxLine)
		}
		return nil, err
	}
	return nodes, nil
}

// blanks separate the fields of a line: ASCII only, so that an ID may hold
// any other byte, a no-break space included.
const blanks = " \t"

// fields splits a line at ASCII blanks.
func fields(text string) []string {
	return strings.FieldsFunc(text, func(r rune) bool { return strings.ContainsRune(blanks, r) })
}

func parseLine(text string) (kolco.Node, error) {
	if strings.Contains(text, ",") {
		return kolco.Node{}, commaError(text)
	}
	f := fields(text)
	if len(f) > 3 {
		return kolco.Node{}, fmt.Errorf("want \"ID [WEIGHT [ZONE]]\", got %d fields", len(f))
	}
	n := kolco.Node{ID: f[0]}
	if len(f) > 1 {
		w, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			return n, fmt.Errorf("weight %q is not a number", f[1])
		}
		if err := nodeset.CheckWeight(w); err != nil {
			return n, err
		}
		n.Weight = w
	}
	if len(f) > 2 {
		n.Zone = f[2]
	}
	return n, nil
}

// commaError explains a line holding a comma, which no ID may hold. The
// fix depends on what the comma stands for: a field separator, as in a
// CSV file ("cache-a,1" for "cache-a 1"), or a list separator, as on a
// command line ("a, b, c" for three lines).
func commaError(text string) error {
	spaced := strings.Join(fields(strings.ReplaceAll(text, ",", " ")), " ")
	if f := fields(spaced); len(f) >= 2 && len(f) <= 3 {
		if _, err := strconv.ParseFloat(f[1], 64); err == nil {
			return fmt.Errorf("%q holds a comma: fields are separated by spaces, as in %q", text, spaced)
		}
	}
	var ids []string
	for item := range strings.SplitSeq(text, ",") {
		if f := fields(item); len(f) == 1 {
			ids = append(ids, strconv.Quote(f[0]))
		} else {
			ids = nil
			break
		}
	}
	if len(ids) > 1 {
		return fmt.Errorf("%q lists %d nodes on one line: write one per line, %s", text, len(ids), strings.Join(ids, ", "))
	}
	return fmt.Errorf("%q holds a comma: node IDs hold none, and fields are separated by spaces, as in \"ID [WEIGHT [ZONE]]\"", text)
}
