// Package nodefile reads node lists: one node per line as
// "ID [WEIGHT [ZONE]]", fields separated by white space. Blank lines and
// lines starting with '#' are ignored. IDs may contain ':' (host:port names
// are common) but no spaces.
package nodefile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kolco-dev/kolco"
)

// ErrSyntax is wrapped by every error about the content of a node file; the
// message names the line.
var ErrSyntax = errors.New("nodefile: syntax error")

// maxLine bounds one line, so that a file without newlines fails with an
// error instead of growing a buffer without limit.
const maxLine = 64 << 10

// Parse reads a node list. The error wraps ErrSyntax and names the line
// number for a malformed line, a bad weight (kolco.ErrBadWeight is wrapped
// too) or an ID listed twice (kolco.ErrDuplicateNode too); read errors are
// returned as they are. On error no nodes are returned.
func Parse(r io.Reader) ([]kolco.Node, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	var nodes []kolco.Node
	seen := map[string]int{}
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' {
			continue
		}
		n, err := parseLine(text)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %w", ErrSyntax, line, err)
		}
		if first, dup := seen[n.ID]; dup {
			return nil, fmt.Errorf("%w: line %d: %w: %q (first on line %d)", ErrSyntax, line, kolco.ErrDuplicateNode, n.ID, first)
		}
		seen[n.ID] = line
		nodes = append(nodes, n)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%w: a line is longer than %d bytes", ErrSyntax, maxLine)
		}
		return nil, err
	}
	return nodes, nil
}

func parseLine(text string) (kolco.Node, error) {
	f := strings.Fields(text)
	if len(f) > 3 {
		return kolco.Node{}, fmt.Errorf("want \"ID [WEIGHT [ZONE]]\", got %d fields", len(f))
	}
	n := kolco.Node{ID: f[0]}
	if len(f) > 1 {
		w, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			return n, fmt.Errorf("weight %q is not a number", f[1])
		}
		if err := kolco.CheckWeight(w); err != nil {
			return n, err
		}
		n.Weight = w
	}
	if len(f) > 2 {
		n.Zone = f[2]
	}
	return n, nil
}
