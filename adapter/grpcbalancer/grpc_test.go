package grpcbalancer_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/adapter/grpcbalancer"
	"github.com/kolco-dev/kolco/adapter/shards"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/membership"
)

const header = "x-kolco-key"

// backend answers UnaryCall with its own name as the server ID.
type backend struct {
	testpb.UnimplementedTestServiceServer
	name string
	srv  *grpc.Server
	addr string
}

func (b *backend) UnaryCall(context.Context, *testpb.SimpleRequest) (*testpb.SimpleResponse, error) {
	return &testpb.SimpleResponse{ServerId: b.name}, nil
}

func startBackend(t *testing.T, name string) *backend {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &backend{name: name, srv: grpc.NewServer(), addr: l.Addr().String()}
	testpb.RegisterTestServiceServer(b.srv, b)
	go b.srv.Serve(l)
	t.Cleanup(b.srv.Stop)
	return b
}

// pool writes a nutcracker.yml pool of backends, named, as a membership
// file.
func pool(t *testing.T, path string, backends []*backend) {
	t.Helper()
	var b strings.Builder
	b.WriteString("grpc:\n  servers:\n")
	for _, be := range backends {
		fmt.Fprintf(&b, "   - %s:1 %s\n", be.addr, be.name)
	}
	if err := os.WriteFile(path+".tmp", []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}

func call(t *testing.T, client testpb.TestServiceClient, key string, viaHeader bool) string {
	id, err := tryCall(client, key, viaHeader)
	if err != nil {
		t.Fatalf("request %q: %v", key, err)
	}
	return id
}

// tryCall sends a request for key and returns the ID of the backend that
// answered it.
func tryCall(client testpb.TestServiceClient, key string, viaHeader bool) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if viaHeader {
		ctx = metadata.AppendToOutgoingContext(ctx, header, key)
	} else {
		ctx = grpcbalancer.WithKey(ctx, key)
	}
	resp, err := client.UnaryCall(ctx, &testpb.SimpleRequest{}, grpc.WaitForReady(true))
	if err != nil {
		return "", err
	}
	return resp.ServerId, nil
}

// expect returns where p sends key with the backends in down skipped: the
// first of its preference list not down.
func expect(t *testing.T, p algo.Placement, key string, down string) string {
	all, err := p.LocateN(nil, key, len(p.Nodes()))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range all {
		if n.ID != down {
			return n.ID
		}
	}
	return ""
}

// check sends a request per key, every tenth by the header, and fails on
// the first that reaches another backend than p places it on with down
// skipped.
func check(t *testing.T, client testpb.TestServiceClient, p algo.Placement, keys []string, down string) {
	t.Helper()
	for i, k := range keys {
		if got, want := call(t, client, k, i%10 == 0), expect(t, p, k, down); got != want {
			t.Fatalf("request %q reached %s, want %s", k, got, want)
		}
	}
}

// TestPlacesByKeyAndFollowsMembership runs the policy over real
// connections to backends on 127.0.0.1, named by a membership file: every
// request reaches the backend jump places its key on; with a backend
// stopped its requests go to the next of their preference list and no
// other request moves; and a backend removed from the file is a change
// applied to the placement, not a rebuild.
func TestPlacesByKeyAndFollowsMembership(t *testing.T) {
	grpcbalancer.Register()
	backends := []*backend{startBackend(t, "backend-a"), startBackend(t, "backend-b"), startBackend(t, "backend-c"),
		startBackend(t, "backend-d"), startBackend(t, "backend-e")}
	path := filepath.Join(t.TempDir(), "nutcracker.yml")
	pool(t, path, backends)
	src := &membership.File{Path: path, Interval: 10 * time.Millisecond, Settle: 10 * time.Millisecond}
	sc := grpcbalancer.ServiceConfig(grpcbalancer.Config{Config: shards.Config{Distribution: "jump"}, Header: header})
	cc, err := grpc.NewClient(grpcbalancer.Scheme+":///backends", grpc.WithResolvers(grpcbalancer.NewResolver(src)),
		grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithDefaultServiceConfig(sc))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	client := testpb.NewTestServiceClient(cc)

	data, _ := os.ReadFile(path)
	nodes, err := membership.ParseNutcracker(data, "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := algo.New("jump", nodes, algo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 2000)
	for i := range keys {
		keys[i] = fmt.Sprintf("user:%d", i)
	}
	check(t, client, p, keys, "")

	backends[1].srv.Stop()
	// A request picked for backend-b before the client saw its connection
	// close fails, as gRPC fails a request in flight on a connection that
	// ends; once a request of backend-b's is answered, the picker skips it.
	stopped := firstKeyOf(t, keys, nodes, "backend-b")
	for deadline := time.Now().Add(30 * time.Second); ; {
		if _, err := tryCall(client, stopped, false); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("backend-b's requests still fail 30s after it stopped")
		}
	}
	check(t, client, p, keys, "backend-b")

	pool(t, path, append(backends[:2:2], backends[3:]...)) // backend-c leaves
	if err := p.Apply(kolco.Change{Remove: []string{"backend-c"}}); err != nil {
		t.Fatal(err)
	}
	probe := firstKeyOf(t, keys, nodes, "backend-c")
	deadline := time.Now().Add(30 * time.Second)
	for call(t, client, probe, false) == "backend-c" {
		if time.Now().After(deadline) {
			t.Fatal("backend-c still takes requests 30s after it left the membership")
		}
	}
	check(t, client, p, keys, "backend-b")
	if rebuilt, _ := algo.New("jump", p.Nodes(), algo.Options{}); movedBy(rebuilt, p, keys) == 0 {
		t.Fatal("a rebuild places every key as the change does: the test shows nothing")
	}
}

func firstKeyOf(t *testing.T, keys []string, nodes []kolco.Node, id string) string {
	p, _ := algo.New("jump", nodes, algo.Options{})
	for _, k := range keys {
		if n, _ := p.LocateID(k); n == id {
			return k
		}
	}
	t.Fatalf("no key on %s", id)
	return ""
}

func movedBy(a, b algo.Placement, keys []string) int {
	n := 0
	for _, k := range keys {
		x, _ := a.LocateID(k)
		y, _ := b.LocateID(k)
		if x != y {
			n++
		}
	}
	return n
}
