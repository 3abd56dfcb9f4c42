package shards_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/adapter/shards"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/compat"
	"github.com/kolco-dev/kolco/membership"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestFollowAppliesEachVersionAsAChange follows a node file through a
// removal and checks that the placement is the history's (jump), that each
// version reaches onChange, and that Close stops the follower.
func TestFollowAppliesEachVersionAsAChange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nodes.txt")
	writeFile(t, path, "a\nb\nc\nd\n")
	changes := make(chan *shards.Table[string], 1)
	src := &membership.File{Path: path, Interval: 10 * time.Millisecond, Settle: 10 * time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, err := shards.Follow(ctx, src, shards.Config{Distribution: "jump"},
		func(n kolco.Node) (string, error) { return n.ID, nil },
		func(t *shards.Table[string]) { changes <- t })
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, "a\nc\nd\n")
	var table *shards.Table[string]
	select {
	case table = <-changes:
	case <-ctx.Done():
		t.Fatal("no change within 30s")
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if f.Table() != table || f.Err() != nil {
		t.Fatalf("the follower's table is not the one published (err %v)", f.Err())
	}
	start := []kolco.Node{{ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "d"}}
	want, _ := algo.New("jump", start, algo.Options{})
	if err := want.Remove("b"); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys(3000) {
		w, _ := want.LocateID(k)
		if got, _ := table.Lookup(k); got != w {
			t.Fatalf("%q on %q, want %q", k, got, w)
		}
	}
}

// TestFollowFirstVersion checks the errors of Follow before a first
// version: a source that stops, and a context that ends.
func TestFollowFirstVersion(t *testing.T) {
	value := func(n kolco.Node) (string, error) { return n.ID, nil }
	_, err := shards.Follow(context.Background(), &membership.File{}, shards.Config{}, value, nil)
	if !errors.Is(err, shards.ErrStopped) || !errors.Is(err, membership.ErrBadConfig) {
		t.Fatalf("source without a path: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	missing := &membership.File{Path: filepath.Join(t.TempDir(), "none.txt")}
	if _, err := shards.Follow(ctx, missing, shards.Config{}, value, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("ended context: %v", err)
	}
	if _, err := shards.Follow(context.Background(), missing, shards.Config{HashTag: "x"}, value, nil); !errors.Is(err, kolco.ErrBadConfig) {
		t.Fatalf("bad config: %v", err)
	}
}

// script is a membership source that yields the versions sent on it.
type script chan membership.Version

func (s script) Read(context.Context) (membership.Version, error) {
	return membership.Version{}, errors.New("script: no reads")
}

func (s script) Follow(ctx context.Context, r membership.Reporter) error {
	for {
		select {
		case v := <-s:
			if err := r.Yield(ctx, v); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// TestFollowTakesTheStoredState follows a store that keeps jump's
// placement state beside the nodes: a follower that saw every change and
// one started after them place every key alike, where a placement built
// anew over the last nodes does not.
func TestFollowTakesTheStoredState(t *testing.T) {
	value := func(n kolco.Node) (string, error) { return n.ID, nil }
	cfg := shards.Config{Distribution: "jump"}
	start := []kolco.Node{{ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "d"}}
	p, _ := algo.New("jump", start, algo.Options{})
	v1 := membership.Version{Revision: 1, Nodes: start, State: membership.StateOf("jump", p).Marshal()}
	if err := p.Remove("b"); err != nil {
		t.Fatal(err)
	}
	v2 := membership.Version{Revision: 2, Nodes: p.Nodes(), State: membership.StateOf("jump", p).Marshal()}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	early := make(script, 2)
	early <- v1
	changed := make(chan *shards.Table[string], 1)
	a, err := shards.Follow(ctx, early, cfg, value, func(t *shards.Table[string]) { changed <- t })
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	early <- v2
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no change within 30s")
	}
	late := make(script, 1)
	late <- v2
	b, err := shards.Follow(ctx, late, cfg, value, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	fresh, _ := algo.New("jump", p.Nodes(), algo.Options{})
	differs := 0
	for _, k := range keys(3000) {
		x, _ := a.Table().Lookup(k)
		y, _ := b.Table().Lookup(k)
		want, _ := p.LocateID(k)
		if x != want || y != want {
			t.Fatalf("%q: followers place it on %q and %q, the history on %q", k, x, y, want)
		}
		if f, _ := fresh.LocateID(k); f != want {
			differs++
		}
	}
	if differs == 0 {
		t.Fatal("a placement built anew places as the history does: the test shows nothing")
	}
}

// TestFollowKetama follows a nutcracker.yml pool placed by twemproxy's
// ketama: each version is placed as nutcracker places its servers.
func TestFollowKetama(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pool.yml")
	writeFile(t, path, "p:\n  servers:\n   - 10.0.0.1:11211:1\n   - 10.0.0.2:11211:2 b\n")
	changes := make(chan *shards.Table[string], 1)
	src := &membership.File{Path: path, Interval: 10 * time.Millisecond, Settle: 10 * time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, err := shards.Follow(ctx, src, shards.Config{Distribution: "ketama"},
		func(n kolco.Node) (string, error) { return n.Addr, nil },
		func(t *shards.Table[string]) { changes <- t })
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	writeFile(t, path, "p:\n  servers:\n   - 10.0.0.1:11211:1\n   - 10.0.0.2:11211:2 b\n   - 10.0.0.3:11212:1\n")
	var table *shards.Table[string]
	select {
	case table = <-changes:
	case <-ctx.Done():
		t.Fatal("no change within 30s")
	}
	want, err := compat.Build("twemproxy", compat.Input{Servers: "10.0.0.1:11211:1,10.0.0.2:11211:2 b,10.0.0.3:11212:1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys(3000) {
		owner, _ := want.Locate(k)
		if got, _ := table.Lookup(k); got != owner.Addr {
			t.Fatalf("%q on %s, nutcracker's %s", k, got, owner.Addr)
		}
	}
	if f.Err() != nil || f.Table() != table {
		t.Fatalf("err %v", f.Err())
	}
}
