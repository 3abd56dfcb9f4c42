package grpcring_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	_ "google.golang.org/grpc/balancer/ringhash" // registers ring_hash_experimental
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/experimental/balancer/weight"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"
	"google.golang.org/grpc/resolver/ringhash"

	"github.com/kolco-dev/kolco/compat/grpcring"
)

// header is the request hash header the tests configure.
const header = "x-kolco-key"

// backend is a gRPC server on 127.0.0.1 that answers UnaryCall with its
// own address as the server ID.
type backend struct {
	testpb.UnimplementedTestServiceServer
	addr string
}

func (b *backend) UnaryCall(context.Context, *testpb.SimpleRequest) (*testpb.SimpleResponse, error) {
	return &testpb.SimpleResponse{ServerId: b.addr}, nil
}

func startBackends(t *testing.T, n int) []string {
	t.Helper()
	addrs := make([]string, n)
	for i := range addrs {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s := grpc.NewServer()
		addrs[i] = l.Addr().String()
		testpb.RegisterTestServiceServer(s, &backend{addr: addrs[i]})
		go s.Serve(l)
		t.Cleanup(s.Stop)
	}
	return addrs
}

// endpointSet is one generated balancer input.
type endpointSet struct {
	name      string
	endpoints []grpcring.Endpoint
	cfg       grpcring.Config
}

// dial returns a client of grpc-go's ring_hash over set, hashing requests
// by the header.
func dial(t *testing.T, set endpointSet) testpb.TestServiceClient {
	t.Helper()
	r := manual.NewBuilderWithScheme("grpcring")
	var eps []resolver.Endpoint
	for _, e := range set.endpoints {
		ep := resolver.Endpoint{Addresses: []resolver.Address{{Addr: e.Addr}}}
		if e.HashKey != "" {
			ep = ringhash.SetHashKey(ep, e.HashKey)
		}
		if e.Weight != 0 {
			ep = weight.Set(ep, weight.EndpointInfo{Weight: e.Weight})
		}
		eps = append(eps, ep)
	}
	r.InitialState(resolver.State{Endpoints: eps})
	sc := fmt.Sprintf(`{"loadBalancingConfig": [{"ring_hash_experimental": {"minRingSize": %d, "maxRingSize": %d, "requestHashHeader": %q}}]}`,
		set.cfg.MinRingSize, set.cfg.MaxRingSize, header)
	cc, err := grpc.NewClient(r.Scheme()+":///backends", grpc.WithResolvers(r),
		grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithDefaultServiceConfig(sc))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return testpb.NewTestServiceClient(cc)
}

// generate returns endpoint sets over backends: sizes from one endpoint to
// all, weights from 1 to 1000, hash keys set on some endpoints, and ring
// sizes from tiny to above the cap.
func generate(backends []string) []endpointSet {
	rng := rand.New(rand.NewPCG(17, 76))
	sizes := []grpcring.Config{{}, {MinRingSize: 10, MaxRingSize: 100}, {MinRingSize: 50000, MaxRingSize: 8 << 20},
		{MinRingSize: 1, MaxRingSize: 3}, {MinRingSize: 4096, MaxRingSize: 4096}, {}}
	var sets []endpointSet
	for i, cfg := range sizes {
		n := min(1+i, len(backends))
		if i == len(sizes)-1 {
			n = len(backends)
		}
		set := endpointSet{cfg: cfg}
		for _, p := range rng.Perm(len(backends))[:n] {
			e := grpcring.Endpoint{Addr: backends[p]}
			if rng.IntN(2) == 0 {
				e.HashKey = fmt.Sprintf("backend-%d", p)
			}
			switch rng.IntN(3) {
			case 1:
				e.Weight = uint32(1 + rng.IntN(10))
			case 2:
				e.Weight = uint32(1 + rng.IntN(1000))
			}
			set.endpoints = append(set.endpoints, e)
		}
		set.name = fmt.Sprintf("%d endpoints, ring %d..%d", n, cfg.MinRingSize, cfg.MaxRingSize)
		if cfg == (grpcring.Config{}) {
			set.name = fmt.Sprintf("%d endpoints, default ring", n)
		}
		sets = append(sets, set)
	}
	return sets
}

// TestMatchesGRPCRingHash sends 10,000 requests with the hash header
// through grpc-go's own ring_hash balancer, for each generated endpoint
// set, and counts those that reach another backend than Ring.Locate names.
// First every endpoint is made READY by a request it must take.
func TestMatchesGRPCRingHash(t *testing.T) {
	backends := startBackends(t, 6)
	keys := make([]string, 10000)
	if raceEnabled {
		keys = keys[:2000]
	}
	for i := range keys {
		keys[i] = fmt.Sprintf("request:%d", i)
	}
	for _, set := range generate(backends) {
		t.Run(set.name, func(t *testing.T) {
			ring, err := grpcring.New(set.endpoints, set.cfg)
			if err != nil {
				t.Fatal(err)
			}
			client := dial(t, set)
			warm(t, client, ring, keys)
			checkJoinedValues(t, client, ring)
			if n := mismatches(t, client, ring, keys); n != 0 {
				t.Fatalf("%d of %d requests reached another backend than the ring names", n, len(keys))
			}
		})
	}
}

// call sends one request hashed by key and returns the backend that
// answered.
func call(t *testing.T, client testpb.TestServiceClient, key string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, header, key)
	resp, err := client.UnaryCall(ctx, &testpb.SimpleRequest{}, grpc.WaitForReady(true))
	if err != nil {
		t.Errorf("request %q: %v", key, err)
		return ""
	}
	return resp.ServerId
}

// warm sends, for each endpoint, one request the ring sends there, so that
// every endpoint is connected and READY before the count.
func warm(t *testing.T, client testpb.TestServiceClient, ring *grpcring.Ring, keys []string) {
	t.Helper()
	todo := map[string]bool{}
	for _, n := range ring.Nodes() {
		todo[n.Addr] = true
	}
	for _, k := range keys {
		owner, _ := ring.Locate(k)
		if !todo[owner.Addr] {
			continue
		}
		delete(todo, owner.Addr)
		if got := call(t, client, k); got != owner.Addr {
			t.Fatalf("request %q reached %s, the ring names %s", k, got, owner.Addr)
		}
	}
	if len(todo) > 0 {
		t.Logf("no key of %d is placed on %v", len(keys), todo)
	}
}

// mismatches sends a request per key, eight at a time, and counts those
// answered by another backend than the ring names.
func mismatches(t *testing.T, client testpb.TestServiceClient, ring *grpcring.Ring, keys []string) int {
	t.Helper()
	var (
		mu    sync.Mutex
		wrong int
		wg    sync.WaitGroup
		next  = make(chan string)
	)
	for range 8 {
		wg.Go(func() {
			for k := range next {
				owner, _ := ring.Locate(k)
				if got := call(t, client, k); got != owner.Addr {
					mu.Lock()
					if wrong < 5 {
						t.Errorf("request %q reached %s, the ring names %s", k, got, owner.Addr)
					}
					wrong++
					mu.Unlock()
				}
			}
		})
	}
	for _, k := range keys {
		next <- k
	}
	close(next)
	wg.Wait()
	return wrong
}

// checkJoinedValues sends requests whose hash header has two values and
// checks that each reaches the endpoint of the values joined by a comma.
func checkJoinedValues(t *testing.T, client testpb.TestServiceClient, ring *grpcring.Ring) {
	t.Helper()
	nodes := ring.Nodes()
	for i := range 50 {
		a, b := fmt.Sprint("a", i), fmt.Sprint("b", i)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		ctx = metadata.AppendToOutgoingContext(ctx, header, a, header, b)
		resp, err := client.UnaryCall(ctx, &testpb.SimpleRequest{}, grpc.WaitForReady(true))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if want := nodes[ring.IndexHash(grpcring.RequestHash(a, b))].Addr; resp.ServerId != want {
			t.Fatalf("header values %q, %q reached %s, want %s", a, b, resp.ServerId, want)
		}
	}
}
