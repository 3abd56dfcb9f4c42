package grpcbalancer

import (
	"cmp"
	"context"
	"math"
	"sync/atomic"

	"google.golang.org/grpc/experimental/balancer/weight"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/ringhash"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/membership"
)

// Scheme is the target scheme of the resolvers NewResolver returns.
const Scheme = "kolco"

// NewResolver returns a resolver builder (for grpc.WithResolvers) whose
// resolvers serve the nodes of a membership source as endpoints, for a
// target "kolco:///anything": each node's address (its ID when it has
// none) with the node's ID as hash key attribute and its weight, rounded
// to an integer of at least 1, as weight attribute. Each version of the
// source becomes a resolver state as it comes; the balancer applies it as
// a change. A source that stops is reported to the channel as a resolver
// error; the last endpoints stand.
func NewResolver(src membership.Source) resolver.Builder { return &resolverBuilder{src: src} }

type resolverBuilder struct{ src membership.Source }

func (r *resolverBuilder) Scheme() string { return Scheme }

func (r *resolverBuilder) Build(_ resolver.Target, cc resolver.ClientConn, _ resolver.BuildOptions) (resolver.Resolver, error) {
	w := membership.Watch(context.Background(), r.src)
	res := &sourceResolver{w: w, done: make(chan struct{})}
	go res.run(cc)
	return res, nil
}

// sourceResolver hands each version of its watcher to the channel, in a
// goroutine it owns until Close.
type sourceResolver struct {
	w       *membership.Watcher
	done    chan struct{}
	closing atomic.Bool // set by Close: the channel may no longer be called
}

func (r *sourceResolver) run(cc resolver.ClientConn) {
	defer close(r.done)
	for v := range r.w.Versions() {
		if err := cc.UpdateState(resolver.State{Endpoints: Endpoints(v.Nodes)}); err != nil {
			// The balancer refused the nodes and keeps the last ones; the
			// channel has been told. Wait for the next version.
			continue
		}
	}
	if err := r.w.Close(); err != nil && !r.closing.Load() {
		cc.ReportError(err)
	}
}

// Endpoints returns nodes as resolver endpoints, as NewResolver serves
// them.
func Endpoints(nodes []kolco.Node) []resolver.Endpoint {
	eps := make([]resolver.Endpoint, len(nodes))
	for i, n := range nodes {
		ep := resolver.Endpoint{Addresses: []resolver.Address{{Addr: cmp.Or(n.Addr, n.ID)}}}
		ep = ringhash.SetHashKey(ep, n.ID)
		w := uint32(max(1, min(math.Round(n.EffectiveWeight()), math.MaxUint32)))
		eps[i] = weight.Set(ep, weight.EndpointInfo{Weight: w})
	}
	return eps
}

func (r *sourceResolver) ResolveNow(resolver.ResolveNowOptions) {}

func (r *sourceResolver) Close() {
	r.closing.Store(true)
	r.w.Close()
	<-r.done
}
