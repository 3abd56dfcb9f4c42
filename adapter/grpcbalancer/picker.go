package grpcbalancer

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/balancer"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/metadata"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/adapter/shards"
)

// keyContext is the context key of a request's key.
type keyContext struct{}

// WithKey returns a context whose requests are placed by key. Unlike the
// header, the key is not sent to the server, and reading it costs the
// picker no allocation.
func WithKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, keyContext{}, key)
}

// errNoBackend is returned for a pick while no endpoint has a child yet.
var errNoBackend = errors.New("grpcbalancer: no backend connected yet")

// childPick is one endpoint's pick_first child as the picker saw it.
type childPick struct {
	picker balancer.Picker // nil while the child has not reported
	state  connectivity.State
}

// usable reports whether the picker may hand the endpoint a request:
// READY, CONNECTING or IDLE (a child that is connecting holds the request
// until it knows), as ring_hash does; not in transient failure.
func (c childPick) usable() bool {
	return c.picker != nil && c.state != connectivity.TransientFailure && c.state != connectivity.Shutdown
}

// picker places requests on the endpoints of one table, by their child's
// last state. It is immutable but for the round-robin counter.
type picker struct {
	table    *shards.Table[struct{}]
	header   string
	children []childPick // by position in table
	next     atomic.Uint32
}

// preference is the scratch space of a preference list.
type preference struct {
	order []int
	nodes []kolco.Node
}

// buffers holds preference lists, so that a request whose backend is down
// allocates nothing either once the pool is warm.
var buffers = sync.Pool{New: func() any { return new(preference) }}

// Pick sends the request to the child of its key's owner when that one is
// usable, else to the first usable one of the key's preference list. When
// none is usable it returns the owner's child's answer, an error.
func (p *picker) Pick(info balancer.PickInfo) (balancer.PickResult, error) {
	key, ok := p.key(info.Ctx)
	if !ok {
		return p.roundRobin(info)
	}
	i, err := p.table.Index(key)
	if err != nil {
		return balancer.PickResult{}, errNoBackend
	}
	if c := p.children[i]; c.usable() {
		return c.picker.Pick(info)
	}
	pref := buffers.Get().(*preference)
	defer buffers.Put(pref)
	pref.order, pref.nodes, _ = p.table.Preference(pref.order[:0], pref.nodes, key, len(p.children))
	for _, j := range pref.order {
		if c := p.children[j]; c.usable() {
			return c.picker.Pick(info)
		}
	}
	if c := p.children[i]; c.picker != nil {
		return c.picker.Pick(info)
	}
	return balancer.PickResult{}, errNoBackend
}

// key returns the request's key: WithKey's, else the header's values.
func (p *picker) key(ctx context.Context) (string, bool) {
	if k, ok := ctx.Value(keyContext{}).(string); ok {
		return k, true
	}
	if p.header == "" {
		return "", false
	}
	md, ok := metadata.FromOutgoingContext(ctx)
	if !ok {
		return "", false
	}
	values := md.Get(p.header)
	if len(values) == 0 {
		return "", false
	}
	return strings.Join(values, ","), true
}

// roundRobin sends a request without a key to the next usable child.
func (p *picker) roundRobin(info balancer.PickInfo) (balancer.PickResult, error) {
	n := uint32(len(p.children))
	start := p.next.Add(1)
	for step := range n {
		if c := p.children[(start+step)%n]; c.usable() {
			return c.picker.Pick(info)
		}
	}
	for _, c := range p.children {
		if c.picker != nil {
			return c.picker.Pick(info)
		}
	}
	return balancer.PickResult{}, errNoBackend
}
