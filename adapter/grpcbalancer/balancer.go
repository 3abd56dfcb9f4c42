// Package grpcbalancer is a grpc-go load balancing policy that sends each
// request to the backend a kolco placement names for the request's key, so
// that requests about one user, tenant or document reach the backend that
// holds it warm:
//
//	grpcbalancer.Register() // once, at init time, as grpc-go requires
//	conn, err := grpc.NewClient(target, creds, grpc.WithDefaultServiceConfig(
//		grpcbalancer.ServiceConfig(grpcbalancer.Config{Config: shards.Config{Distribution: "jump"}})))
//	reply, err := client.Get(grpcbalancer.WithKey(ctx, "user:42"), req)
//
// The key is the one set with [WithKey], else the values of the request
// header the configuration names (as grpc-go's ring_hash reads its
// requestHashHeader, gRFC A76). Any kolco algorithm places it (see package
// shards), over the resolver's endpoints: each is a node whose ID is its
// hash key attribute (resolver/ringhash.SetHashKey) or else its first
// address, and whose weight is its weight attribute - the names ring_hash
// hashes, so the same resolvers serve both. To place requests exactly as
// ring_hash does, use package compat/grpcring instead.
//
// # Backends down
//
// Each endpoint has its own pick_first child that connects at once and
// reconnects by itself. The placement is never rebuilt for a connection's
// state: a request whose backend is in transient failure goes to the next
// backend of its key's preference list that is READY, CONNECTING or IDLE,
// as ring_hash walks its ring (gRFC A61), and returns home when the backend
// is back. A request without a key goes round the backends.
//
// # Membership
//
// A new resolver state is applied to the placement as the change from the
// last one (kolco.Diff), never a rebuild, so that history-dependent
// algorithms (jump, anchor, slots) move only the keys the change moves.
// [NewResolver] serves the nodes of a kolco membership source (a node file,
// nutcracker.yml, DNS, etcd) as endpoints, so that a gRPC client follows
// the same membership as kolco proxy and the other adapters.
package grpcbalancer

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"google.golang.org/grpc/balancer"
	"google.golang.org/grpc/balancer/endpointsharding"
	"google.golang.org/grpc/balancer/pickfirst"
	"google.golang.org/grpc/experimental/balancer/weight"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/ringhash"
	"google.golang.org/grpc/serviceconfig"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/adapter/shards"
)

// Name is the policy's name in a service config's loadBalancingConfig.
const Name = "kolco_hash"

var register sync.Once

// Register registers the policy with grpc-go under [Name]. grpc-go wants
// policies registered at initialization time, before any channel is
// created: call it from an init function or at the start of main. Calling
// it again does nothing.
func Register() { register.Do(func() { balancer.Register(builder{}) }) }

type builder struct{}

func (builder) Name() string { return Name }

func (builder) Build(cc balancer.ClientConn, opts balancer.BuildOptions) balancer.Balancer {
	b := &kolcoBalancer{ClientConn: cc}
	b.child = endpointsharding.NewBalancer(b, opts, balancer.Get(pickfirst.Name).Build, endpointsharding.Options{})
	return b
}

func (builder) ParseConfig(data json.RawMessage) (serviceconfig.LoadBalancingConfig, error) {
	cfg, err := ParseConfig(data)
	if err != nil {
		return nil, err
	}
	return &lbConfig{Config: cfg}, nil
}

// kolcoBalancer places requests over the endpoints of its resolver state;
// the endpointsharding child keeps a pick_first balancer per endpoint and
// reports their states to UpdateState. It embeds the channel's ClientConn
// to stand between the child and the channel.
type kolcoBalancer struct {
	balancer.ClientConn
	child balancer.Balancer

	mu     sync.Mutex // guards the fields below
	cfg    Config
	live   *shards.Live[struct{}]
	states []endpointsharding.ChildState // the child's last report
}

// UpdateClientConnState applies the resolver's endpoints to the placement
// as a change (or builds it, first or on a new configuration) and hands
// them to the child, which reports back through UpdateState.
func (b *kolcoBalancer) UpdateClientConnState(s balancer.ClientConnState) error {
	lb, ok := s.BalancerConfig.(*lbConfig)
	if !ok {
		return fmt.Errorf("%w: %T is not this policy's configuration", ErrBadConfig, s.BalancerConfig)
	}
	nodes, err := endpointNodes(s.ResolverState.Endpoints)
	if err == nil {
		err = b.place(lb.Config, nodes)
	}
	if err != nil {
		b.ResolverError(err)
		return balancer.ErrBadResolverState
	}
	return b.child.UpdateClientConnState(balancer.ClientConnState{ResolverState: s.ResolverState})
}

func (b *kolcoBalancer) place(cfg Config, nodes []kolco.Node) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.live != nil && b.cfg == cfg {
		return b.live.Update(nodes)
	}
	l, err := shards.New(cfg.Config, nodes, func(kolco.Node) (struct{}, error) { return struct{}{}, nil })
	if err != nil {
		return err
	}
	b.live, b.cfg = l, cfg
	return nil
}

// endpointNodes returns the node of each endpoint: ID its hash key, else
// its first address; Addr that address; Weight its weight attribute.
func endpointNodes(eps []resolver.Endpoint) ([]kolco.Node, error) {
	nodes := make([]kolco.Node, 0, len(eps))
	for _, ep := range eps {
		if len(ep.Addresses) == 0 {
			return nil, fmt.Errorf("grpcbalancer: %w: an endpoint without an address", kolco.ErrBadNodeID)
		}
		addr := ep.Addresses[0].Addr
		w := weight.FromEndpoint(ep).Weight
		nodes = append(nodes, kolco.Node{ID: cmp.Or(ringhash.HashKey(ep), addr), Addr: addr, Weight: float64(max(w, 1))})
	}
	return nodes, nil
}

// endpointID returns the node ID of an endpoint, as endpointNodes does.
func endpointID(ep resolver.Endpoint) string {
	if len(ep.Addresses) == 0 {
		return ""
	}
	return cmp.Or(ringhash.HashKey(ep), ep.Addresses[0].Addr)
}

// UpdateState takes the child's report of its endpoints and gives the
// channel a picker over them.
func (b *kolcoBalancer) UpdateState(s balancer.State) {
	b.mu.Lock()
	b.states = endpointsharding.ChildStatesFromPicker(s.Picker)
	p := b.pickerLocked(s.Picker)
	b.mu.Unlock()
	b.ClientConn.UpdateState(balancer.State{ConnectivityState: s.ConnectivityState, Picker: p})
}

// pickerLocked returns a picker over the current placement and the
// child's last report; before there is a placement, the child's own.
func (b *kolcoBalancer) pickerLocked(child balancer.Picker) balancer.Picker {
	if b.live == nil {
		return child
	}
	t := b.live.Table()
	p := &picker{table: t, header: b.cfg.Header, children: make([]childPick, t.Len())}
	ids := make([]string, t.Len())
	for i := range t.Len() {
		ids[i] = t.Node(i).ID
	}
	for _, c := range b.states {
		if i, ok := slices.BinarySearchFunc(ids, endpointID(c.Endpoint), strings.Compare); ok {
			p.children[i] = childPick{picker: c.State.Picker, state: c.State.ConnectivityState}
		}
	}
	return p
}

func (b *kolcoBalancer) ResolverError(err error) {
	b.child.ResolverError(err)
}

func (b *kolcoBalancer) UpdateSubConnState(sc balancer.SubConn, s balancer.SubConnState) {
	b.child.UpdateSubConnState(sc, s)
}

func (b *kolcoBalancer) ExitIdle() { b.child.ExitIdle() }

func (b *kolcoBalancer) Close() { b.child.Close() }
