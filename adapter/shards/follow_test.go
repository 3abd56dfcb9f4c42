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
