package membership

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat"
	"github.com/kolco-dev/kolco/nodefile"
)

// File formats.
const (
	// FormatNodes is kolco's node list, one "ID [WEIGHT [ZONE]]" per line
	// (package nodefile). Its nodes have no address.
	FormatNodes = "nodes"
	// FormatNutcracker is one pool's servers in twemproxy's
	// nutcracker.yml, "host:port:weight [name]", named and weighted as the
	// proxy names and weights them (the name, else the address as
	// twemproxy hashes it) and zoned by the pool's kolco "zones" key.
	FormatNutcracker = "nutcracker"
)

// maxFileSize bounds a membership file, so that a wrong path (a log, a
// device) fails with an error instead of filling memory.
const maxFileSize = 16 << 20

// File is a [Source] reading a node list from a file, the embedded
// default: a static file on one box, reloaded when it changes. A change is
// taken only once the file has settled - read twice, Settle apart, with
// the same bytes - so that a file caught half-written by an editor or a
// configuration tool is never applied, even where the half parses.
// Writing the new file beside the old one and renaming it over is still
// the safe way to change it.
//
// The zero values of the duration fields mean the documented defaults.
type File struct {
	// Path is the file to read. Required.
	Path string
	// Format is FormatNodes or FormatNutcracker; empty means
	// FormatNutcracker for a name ending in .yml or .yaml, else
	// FormatNodes.
	Format string
	// Pool names the nutcracker.yml pool to read; empty means the only
	// pool of the file.
	Pool string
	// Interval is how often the file is polled for a change. Default 1s:
	// a change applies within a second or two, at the cost of one small
	// read a second.
	Interval time.Duration
	// Settle is how long a changed file must stay the same before it is
	// taken. Default 500ms: longer than an editor or a tool takes to write
	// a node list, short beside the time an operator waits for a change.
	Settle time.Duration

	// wait sleeps for d or until ctx is done; nil means a timer. Tests
	// replace it to step the polling loop.
	wait func(ctx context.Context, d time.Duration) error
}

func (f *File) interval() time.Duration { return durationOr(f.Interval, time.Second) }
func (f *File) settle() time.Duration   { return durationOr(f.Settle, 500*time.Millisecond) }

func durationOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// check validates the configuration; the error wraps [ErrBadConfig].
func (f *File) check() error {
	if f.Path == "" {
		return fmt.Errorf("%w: file: no path", ErrBadConfig)
	}
	switch f.format() {
	case FormatNodes:
		if f.Pool != "" {
			return fmt.Errorf("%w: file %s: a pool is named, but a node list has no pools", ErrBadConfig, f.Path)
		}
	case FormatNutcracker:
	default:
		return fmt.Errorf("%w: file %s: unknown format %q (want %s or %s)", ErrBadConfig, f.Path, f.Format, FormatNodes, FormatNutcracker)
	}
	return nil
}

func (f *File) format() string {
	if f.Format != "" {
		return f.Format
	}
	switch strings.ToLower(filepath.Ext(f.Path)) {
	case ".yml", ".yaml":
		return FormatNutcracker
	}
	return FormatNodes
}

// Read returns the file's nodes once the file has settled, at revision 0
// (a file has no revisions of its own). The error wraps [ErrBadConfig],
// [ErrBadContent] for a file that does not parse (and [nodefile.ErrSyntax]
// or twemproxy.ErrBadServer), or is the error reading the file.
func (f *File) Read(ctx context.Context) (Version, error) {
	if err := f.check(); err != nil {
		return Version{}, err
	}
	data, _, err := f.poll(ctx, nil, nil)
	if err != nil {
		return Version{}, err
	}
	nodes, err := f.parse(data)
	if err != nil {
		return Version{}, err
	}
	return Version{Nodes: nodes, Resync: true}, nil
}

// Follow implements [Source]: it polls the file every Interval and yields
// each settled content that parses and differs from the last one taken.
// A file that cannot be read is a failure to reach the store; one that
// does not parse is an answer the source refuses: either way the last
// version stands.
func (f *File) Follow(ctx context.Context, r Reporter) error {
	if err := f.check(); err != nil {
		return err
	}
	var last, refused []byte
	var rev int64
	for {
		data, changed, err := f.poll(ctx, last, refused)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			r.Failed(err)
		case !changed:
			refused = nil
			r.Answered(nil)
		case refused != nil && bytes.Equal(data, refused):
			r.Answered(f.refusal(data)) // still the same broken content
		default:
			nodes, err := f.parse(data)
			if err != nil {
				refused = data
				r.Answered(err)
				break
			}
			rev++
			if err := r.Yield(ctx, Version{Revision: rev, Nodes: nodes, Resync: rev == 1}); err != nil {
				return err
			}
			last, refused = data, nil
		}
		if err := f.sleep(ctx, f.interval()); err != nil {
			return err
		}
	}
}

// refusal returns the parse error of content already refused once.
func (f *File) refusal(data []byte) error {
	_, err := f.parse(data)
	return err
}

// poll reads the file; when its content differs from last (or last is
// nil), it waits until two reads Settle apart agree and returns that
// content with changed set. Content equal to refused, which settled
// before, is returned at once.
func (f *File) poll(ctx context.Context, last, refused []byte) (data []byte, changed bool, err error) {
	a, err := f.readFile()
	if err != nil {
		return nil, false, err
	}
	if last != nil && bytes.Equal(a, last) {
		return a, false, nil
	}
	if refused != nil && bytes.Equal(a, refused) {
		return a, true, nil
	}
	for {
		if err := f.sleep(ctx, f.settle()); err != nil {
			return nil, false, err
		}
		b, err := f.readFile()
		if err != nil {
			return nil, false, err
		}
		if bytes.Equal(a, b) {
			return b, last == nil || !bytes.Equal(b, last), nil
		}
		a = b
	}
}

// readFile reads the whole file, refusing one over maxFileSize.
func (f *File) readFile() ([]byte, error) {
	file, err := os.Open(f.Path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, maxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("%w: %s: larger than %d MiB", ErrBadContent, f.Path, maxFileSize>>20)
	}
	return data, nil
}

// parse reads nodes from the file's content, sorted by ID. The error
// wraps [ErrBadContent] and names the file.
func (f *File) parse(data []byte) ([]kolco.Node, error) {
	var nodes []kolco.Node
	var err error
	if f.format() == FormatNutcracker {
		nodes, err = ParseNutcracker(data, f.Pool)
	} else {
		nodes, err = nodefile.Parse(bytes.NewReader(data))
	}
	if err != nil {
		// The path once: a nutcracker.yml's error names the file and its
		// line itself, given the path.
		var ne *compat.NutcrackerError
		if errors.As(err, &ne) && err.Error() == ErrBadContent.Error()+": "+ne.Error() {
			ne.Path = f.Path
			err = fmt.Errorf("%w: %w", ErrBadContent, ne)
		} else {
			err = fmt.Errorf("%s: %w", f.Path, err)
		}
		if !errors.Is(err, ErrBadContent) {
			err = fmt.Errorf("%w: %w", ErrBadContent, err)
		}
		return nil, err
	}
	SortNodes(nodes)
	return nodes, nil
}

// sleep waits for d or until ctx is done, when it returns ctx's error.
func (f *File) sleep(ctx context.Context, d time.Duration) error {
	if f.wait != nil {
		return f.wait(ctx, d)
	}
	return sleep(ctx, d)
}

// sleep waits for d or until ctx is done, when it returns ctx's error.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
