package membership_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/compat/twemproxy"
	"github.com/kolco-dev/kolco/membership"
	"github.com/kolco-dev/kolco/nodefile"
)

// within bounds a wait on the watcher's own goroutine: the failure path of
// a test that would otherwise hang, never a way to order events.
const within = 10 * time.Second

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// next returns the watcher's next version, failing the test if none comes.
func next(t *testing.T, w *membership.Watcher) membership.Version {
	t.Helper()
	select {
	case v, ok := <-w.Versions():
		if !ok {
			t.Fatalf("watcher stopped: %v", w.Close())
		}
		return v
	case <-time.After(within):
		t.Fatalf("no version within %v; status: %v", within, w.Status())
	}
	return membership.Version{}
}

// wait returns the length of the loop's next wait, failing the test if the
// loop does not reach one.
func wait(t *testing.T, s *membership.Stepper) time.Duration {
	t.Helper()
	select {
	case d := <-s.Waits:
		return d
	case <-time.After(within):
		t.Fatal("the polling loop never waited")
	}
	return 0
}

// startStepped watches f with its waits under the test's control.
func startStepped(t *testing.T, f *membership.File) (*membership.Watcher, *membership.Stepper) {
	t.Helper()
	checkNoLeak(t)
	s := membership.Step(f)
	w := membership.Watch(context.Background(), f)
	t.Cleanup(func() { w.Close() })
	return w, s
}

func TestFileNeverAppliesAHalfWrittenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nodes.txt")
	writeFile(t, path, "a\nb 2\n")
	f := &membership.File{Path: path, Interval: time.Second, Settle: 100 * time.Millisecond}
	w, s := startStepped(t, f)

	if d := wait(t, s); d != f.Settle {
		t.Fatalf("first wait %v, want the settle time %v", d, f.Settle)
	}
	s.Release()
	v := next(t, w)
	if want := []kolco.Node{{ID: "a"}, {ID: "b", Weight: 2}}; !slices.Equal(v.Nodes, want) || v.Revision != 1 || !v.Resync {
		t.Fatalf("first version %+v, want revision 1, resync, nodes %v", v, want)
	}

	// A writer gets as far as "c" of "c 3 z1": the half parses, as three
	// nodes, and must not be taken.
	if d := wait(t, s); d != f.Interval {
		t.Fatalf("wait %v, want the poll interval %v", d, f.Interval)
	}
	writeFile(t, path, "a\nb 2\nc")
	s.Release()
	if d := wait(t, s); d != f.Settle {
		t.Fatalf("a changed file waited %v, want the settle time %v", d, f.Settle)
	}
	writeFile(t, path, "a\nb 2\nc 3 z1\n") // the writer finishes
	s.Release()
	if d := wait(t, s); d != f.Settle {
		t.Fatalf("a file changed again while settling waited %v, want a new settle time %v", d, f.Settle)
	}
	s.Release()
	v = next(t, w)
	if want := []kolco.Node{{ID: "a"}, {ID: "b", Weight: 2}, {ID: "c", Weight: 3, Zone: "z1"}}; !slices.Equal(v.Nodes, want) || v.Revision != 2 || v.Resync {
		t.Fatalf("second version %+v, want revision 2, not resync, nodes %v", v, want)
	}
}

func TestFileBrokenKeepsLastVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nodes.txt")
	writeFile(t, path, "a\nb\n")
	f := &membership.File{Path: path}
	w, s := startStepped(t, f)
	wait(t, s)
	s.Release()
	first := next(t, w)

	wait(t, s) // interval
	writeFile(t, path, "a\nb -1\n")
	s.Release()
	wait(t, s) // settle
	s.Release()
	wait(t, s) // the next interval: the broken file was read and refused
	st := w.Status()
	if !st.Stale() || !errors.Is(st.Err, membership.ErrBadContent) || !errors.Is(st.Err, nodefile.ErrSyntax) || !errors.Is(st.Err, kolco.ErrBadWeight) {
		t.Fatalf("status after a broken file: %v (stale %v); want stale with ErrBadContent, ErrSyntax, ErrBadWeight", st, st.Stale())
	}
	if st.Revision != first.Revision {
		t.Errorf("status revision %d, want the last good one %d", st.Revision, first.Revision)
	}

	os.Remove(path)
	s.Release()
	wait(t, s) // the next interval: the file could not be read
	if st := w.Status(); !errors.Is(st.Err, fs.ErrNotExist) {
		t.Fatalf("status with the file gone: %v, want fs.ErrNotExist", st)
	}

	writeFile(t, path, "a\nb\nc\n")
	s.Release()
	wait(t, s) // settle
	s.Release()
	v := next(t, w)
	if !slices.Equal(v.IDs(), []string{"a", "b", "c"}) || v.Revision != first.Revision+1 {
		t.Fatalf("after the fix: %v", v)
	}
	wait(t, s)
	if st := w.Status(); st.Stale() || st.Revision != v.Revision {
		t.Errorf("status after the fix: %v, want current at revision %d", st, v.Revision)
	}
}

// TestFileFollowsRenames runs the loop on real timers: a file replaced by
// rename, as tools should write it, is taken.
func TestFileFollowsRenames(t *testing.T) {
	checkNoLeak(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "nodes.txt")
	writeFile(t, path, "a\n")
	w := membership.Watch(context.Background(), &membership.File{Path: path, Interval: 5 * time.Millisecond, Settle: 5 * time.Millisecond})
	defer w.Close()
	if v := next(t, w); !slices.Equal(v.IDs(), []string{"a"}) {
		t.Fatalf("first version %v", v)
	}
	for i, content := range []string{"a\nb\n", "b\n", "b\nc\nd\n"} {
		tmp := filepath.Join(dir, "new")
		writeFile(t, tmp, content)
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
		want, _ := (&membership.File{Path: path, Settle: time.Millisecond}).Read(context.Background())
		v := next(t, w)
		if !slices.Equal(v.Nodes, want.Nodes) || v.Revision != int64(i+2) {
			t.Fatalf("change %d: got %v, want revision %d with %v", i, v, i+2, want.IDs())
		}
	}
}

func TestFileReadNutcracker(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "nutcracker.yml")
	writeFile(t, path, `kolco:
  metrics_listen: 127.0.0.1:9100
alpha:
  listen: 127.0.0.1:22121
  distribution: ring
  replicas: 2
  servers:
   - 127.0.0.1:11211:1 mc-a
   - 127.0.0.1:11212:2
   - /tmp/mc.sock:1 mc-s
  zones:
    mc-a: z1
    127.0.0.1:11212: z2
`)
	v, err := (&membership.File{Path: path, Settle: time.Millisecond}).Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []kolco.Node{
		{ID: "127.0.0.1:11212", Weight: 2, Zone: "z2", Addr: "127.0.0.1:11212"},
		{ID: "mc-a", Weight: 1, Zone: "z1", Addr: "127.0.0.1:11211"},
		{ID: "mc-s", Weight: 1, Addr: "/tmp/mc.sock"},
	}
	if !slices.Equal(v.Nodes, want) {
		t.Errorf("nodes %+v\nwant %+v", v.Nodes, want)
	}
}

func TestFileErrors(t *testing.T) {
	dir := t.TempDir()
	yml := filepath.Join(dir, "two.yaml")
	writeFile(t, yml, "a:\n  servers: [\"h:1:1\"]\nb:\n  servers: [\"h:2:1\"]\n")
	for _, c := range []struct {
		name string
		f    membership.File
		want []error
	}{
		{"no path", membership.File{}, []error{membership.ErrBadConfig}},
		{"unknown format", membership.File{Path: yml, Format: "xml"}, []error{membership.ErrBadConfig}},
		{"pool in a node list", membership.File{Path: filepath.Join(dir, "n.txt"), Pool: "a"}, []error{membership.ErrBadConfig}},
		{"missing", membership.File{Path: filepath.Join(dir, "none.txt")}, []error{fs.ErrNotExist}},
		{"two pools, none named", membership.File{Path: yml}, []error{membership.ErrBadContent}},
		{"unknown pool", membership.File{Path: yml, Pool: "c"}, []error{membership.ErrBadContent}},
		{"bad server line", membership.File{Path: writeTemp(t, dir, "bad.yml", "p:\n  servers: [\"h:0:1\"]\n")}, []error{membership.ErrBadContent, twemproxy.ErrBadServer}},
		{"duplicate name", membership.File{Path: writeTemp(t, dir, "dup.yml", "p:\n  servers: [\"h:1:1 x\", \"h:2:1 x\"]\n")}, []error{membership.ErrBadContent, kolco.ErrDuplicateNode}},
		{"not yaml", membership.File{Path: writeTemp(t, dir, "bad2.yml", "p: [\n")}, []error{membership.ErrBadContent}},
		{"bad node list", membership.File{Path: writeTemp(t, dir, "bad.txt", "a\na\n")}, []error{membership.ErrBadContent, nodefile.ErrSyntax, kolco.ErrDuplicateNode}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.f.Settle = time.Millisecond
			_, err := c.f.Read(context.Background())
			for _, want := range c.want {
				if !errors.Is(err, want) {
					t.Errorf("error %v, want %v", err, want)
				}
			}
		})
	}
}

func TestFileFollowBadConfigStopsWatcher(t *testing.T) {
	checkNoLeak(t)
	w := membership.Watch(context.Background(), &membership.File{})
	if _, ok := <-w.Versions(); ok {
		t.Fatal("a version from a source without a path")
	}
	if err := w.Close(); !errors.Is(err, membership.ErrBadConfig) {
		t.Errorf("Close: %v, want ErrBadConfig", err)
	}
	if st := w.Status(); !errors.Is(st.Err, membership.ErrBadConfig) {
		t.Errorf("status %v, want ErrBadConfig", st)
	}
}

func writeTemp(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	writeFile(t, path, content)
	return path
}
