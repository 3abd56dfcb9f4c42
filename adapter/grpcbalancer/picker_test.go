package grpcbalancer

import (
	"context"
	"fmt"
	"testing"

	"google.golang.org/grpc/balancer"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/metadata"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/adapter/shards"
	"github.com/kolco-dev/kolco/algo"
)

// namedPicker stands for an endpoint's pick_first child: it answers with
// its position in the table, in the result's metadata slot.
type namedPicker struct{ result balancer.PickResult }

func (p *namedPicker) Pick(balancer.PickInfo) (balancer.PickResult, error) { return p.result, nil }

func testPicker(t testing.TB, dist string, n int) (*picker, []kolco.Node) {
	nodes := make([]kolco.Node, n)
	for i := range nodes {
		nodes[i] = kolco.Node{ID: fmt.Sprintf("backend-%02d", i), Addr: fmt.Sprintf("10.0.0.%d:50051", i+1)}
	}
	l, err := shards.New(shards.Config{Distribution: dist}, nodes, func(kolco.Node) (struct{}, error) { return struct{}{}, nil })
	if err != nil {
		t.Fatal(err)
	}
	p := &picker{table: l.Table(), header: "x-key", children: make([]childPick, n)}
	for i := range p.children {
		md := metadata.Pairs("backend", p.table.Node(i).ID)
		p.children[i] = childPick{picker: &namedPicker{balancer.PickResult{Metadata: md}}, state: connectivity.Ready}
	}
	return p, nodes
}

func picked(t testing.TB, p *picker, ctx context.Context) string {
	r, err := p.Pick(balancer.PickInfo{Ctx: ctx})
	if err != nil {
		t.Fatal(err)
	}
	return r.Metadata.Get("backend")[0]
}

// TestPickSkipsBackendsInTransientFailure checks the owner, the
// preference list past backends in transient failure, the header and
// WithKey, and round robin without a key.
func TestPickSkipsBackendsInTransientFailure(t *testing.T) {
	p, nodes := testPicker(t, "jump", 5)
	want, _ := algo.New("jump", nodes, algo.Options{})
	p.children[2].state = connectivity.TransientFailure
	p.children[3].state = connectivity.Connecting // usable: it holds the request
	for i := range 500 {
		key := fmt.Sprint("user:", i)
		all, _ := want.LocateN(nil, key, 5)
		owner := all[0].ID
		if owner == "backend-02" {
			owner = all[1].ID
		}
		if got := picked(t, p, WithKey(context.Background(), key)); got != owner {
			t.Fatalf("%q: picked %s, want %s", key, got, owner)
		}
		if got := picked(t, p, metadata.AppendToOutgoingContext(context.Background(), "x-key", key)); got != owner {
			t.Fatalf("%q by header: picked %s, want %s", key, got, owner)
		}
	}
	seen := map[string]bool{}
	for range 10 {
		seen[picked(t, p, context.Background())] = true
	}
	if len(seen) != 4 || seen["backend-02"] {
		t.Fatalf("without a key, picked %v: want the four usable backends", seen)
	}
}

// TestPickDoesNotAllocate checks a pick by WithKey's key, with the owner
// usable and, outside the race detector (whose sync.Pool drops buffers),
// with the owner in transient failure.
func TestPickDoesNotAllocate(t *testing.T) {
	for _, dist := range []string{"ring", "jump", "maglev"} {
		p, _ := testPicker(t, dist, 10)
		ctx := WithKey(context.Background(), "user:42")
		info := balancer.PickInfo{Ctx: ctx}
		if n := testing.AllocsPerRun(1000, func() { _, _ = p.Pick(info) }); n != 0 {
			t.Errorf("%s: %v allocations per pick", dist, n)
		}
		i, _ := p.table.Index("user:42")
		p.children[i].state = connectivity.TransientFailure
		if n := testing.AllocsPerRun(1000, func() { _, _ = p.Pick(info) }); n != 0 && !raceEnabled {
			t.Errorf("%s, owner down: %v allocations per pick", dist, n)
		}
	}
}

var sinkIndex int

// BenchmarkPick compares, over 10 backends, the bare placement's lookup
// with a pick by WithKey's key and by the header (whose metadata grpc-go
// copies per read).
func BenchmarkPick(b *testing.B) {
	keys := make([]context.Context, 1024)
	byHeader := make([]context.Context, 1024)
	names := make([]string, 1024)
	for i := range keys {
		names[i] = fmt.Sprintf("user:%d:profile", i)
		keys[i] = WithKey(context.Background(), names[i])
		byHeader[i] = metadata.AppendToOutgoingContext(context.Background(), "x-key", names[i])
	}
	for _, dist := range []string{"ring", "jump", "maglev"} {
		p, nodes := testPicker(b, dist, 10)
		bare, _ := algo.New(dist, nodes, algo.Options{})
		b.Run(dist+"/placement", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				sinkIndex, _ = bare.LocateIndex(names[i&1023])
			}
		})
		b.Run(dist+"/pick", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				_, _ = p.Pick(balancer.PickInfo{Ctx: keys[i&1023]})
			}
		})
		b.Run(dist+"/pick-header", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				_, _ = p.Pick(balancer.PickInfo{Ctx: byHeader[i&1023]})
			}
		})
	}
}
