package gossip

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/membership"
)

// TestCloseLeaksNothing: members joined, followed and closed leave no
// goroutine behind, memberlist's included.
func TestCloseLeaksNothing(t *testing.T) {
	before := runtime.NumGoroutine()
	seed, err := Join(fast(Config{Meta: node("m1")}))
	if err != nil {
		t.Fatal(err)
	}
	obs, err := Join(fast(Config{Seeds: []string{seed.Addr()}}))
	if err != nil {
		t.Fatal(err)
	}
	f, err := membership.Follow(context.Background(), obs, membership.FollowConfig{Algorithm: "ring"})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the follower to place m1", func() bool { return len(f.View().Placement.Nodes()) == 1 })
	_ = f.Close()
	_ = obs.Close()
	_ = seed.Close()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines left, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond) // waiting for exits already under way
	}
}
