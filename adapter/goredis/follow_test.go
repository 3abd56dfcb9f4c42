package goredis_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/adapter/goredis"
	"github.com/kolco-dev/kolco/adapter/shards"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/membership"
)

func writePool(t *testing.T, path string, f *fleet, names ...string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("shards:\n  servers:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "   - %s:1 %s\n", f.servers[n].Addr, n)
	}
	if err := os.WriteFile(path+".tmp", []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}

// TestFollowPassesChangesToTheRing follows a nutcracker.yml pool of real
// redis servers through a removal and an addition: the ring made by
// NewRing gets the new shards, and keys are placed by jump with those
// changes applied, not by jump built anew.
func TestFollowPassesChangesToTheRing(t *testing.T) {
	f := startFleet(t, "s1", "s2", "s3", "s4")
	path := filepath.Join(t.TempDir(), "shards.yml")
	writePool(t, path, f, "s1", "s2", "s3")
	src := &membership.File{Path: path, Interval: 10 * time.Millisecond, Settle: 10 * time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sh, err := goredis.Follow(ctx, src, shards.Config{Distribution: "jump", HashTag: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	opt := sh.Options(&redis.RingOptions{HeartbeatFrequency: 20 * time.Millisecond})
	seen := watch(opt)
	rdb := redis.NewRing(opt)
	defer rdb.Close()
	sh.Attach(rdb)
	seen.waitLive(t, "s1", "s2", "s3")

	want, _ := algo.New("jump", []kolco.Node{{ID: "s1"}, {ID: "s2"}, {ID: "s3"}}, algo.Options{})
	writePool(t, path, f, "s1", "s3")
	seen.waitLive(t, "s1", "s3")
	writePool(t, path, f, "s1", "s3", "s4")
	last := seen.waitLive(t, "s1", "s3", "s4")
	if err := want.Apply(kolco.Change{Remove: []string{"s2"}}); err != nil {
		t.Fatal(err)
	}
	if err := want.Apply(kolco.Change{Add: []kolco.Node{{ID: "s4"}}}); err != nil {
		t.Fatal(err)
	}
	rebuilt, _ := algo.New("jump", want.Nodes(), algo.Options{})
	keys := testKeys(2000)
	if movedBy(rebuilt, keys, locateAll(want, keys)) == 0 {
		t.Fatal("a rebuild places every key as the changes do: the test shows nothing")
	}
	for _, k := range keys {
		tk := shards.Tagged(k, [2]byte{'{', '}'})
		id, _ := want.LocateID(tk)
		if got := last.Get(tk); got != id {
			t.Fatalf("%q on %s, want %s", k, got, id)
		}
	}
	setAll(t, rdb, keys)
	owners := locateAll(want, keys)
	f.checkOn(t, keys, owners)
	if !slices.Contains(owners, "s4") || slices.Contains(owners, "s2") {
		t.Fatal("s4 holds no key, or s2 still does")
	}
}

func locateAll(p algo.Placement, keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i], _ = p.LocateID(shards.Tagged(k, [2]byte{'{', '}'}))
	}
	return out
}
