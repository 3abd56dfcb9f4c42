// Package dns is a membership source over DNS, for Kubernetes headless
// services and the like: it polls SRV records and names each node by the
// stable host name an SRV record points at, never by an IP address.
//
// A pod's address changes when it restarts; its name in a StatefulSet's
// headless service ("mc-0.mc.default.svc.cluster.local") does not. A node
// named by its address would come back as a new node after every restart
// and move its keys, the trap consistent hashing must not fall into. So
// the SRV target names the node, and A or AAAA records (which carry only
// addresses) name nodes only where the user says the addresses are stable.
// SRV targets that Kubernetes derives from the pod's address (a
// Deployment's pods, "10-0-0-7.mc.default.svc...") are refused for the
// same reason unless addresses are declared stable.
//
// SRV weights are ignored unless enabled: CoreDNS sets them to floor(100/n)
// for n endpoints, which would re-weight every node at every scale event,
// and jump, jumpback, jumpbackanchor, flip, binomial, power and anchor take
// no weights.
//
// The source needs only the standard library's resolver; tests run it
// against a DNS server on loopback.
package dns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/membership"
)

// Record types a [Source] looks up.
const (
	// SRV records: a node per target host name, its address the target
	// and port. The default.
	SRV = "SRV"
	// A looks up A and AAAA records: a node per address, at Port. Allowed
	// only with StableAddresses.
	A = "A"
)

// ErrUnstableName is wrapped when nodes would be named by addresses that
// the configuration does not declare stable.
var ErrUnstableName = errors.New("dns: node named by an address not declared stable")

// Source is a [membership.Source] over DNS. The zero values of its
// optional fields mean the documented defaults.
type Source struct {
	// Name is the name looked up, such as
	// "_memcache._tcp.mc.default.svc.cluster.local." for SRV records (a
	// final dot makes it absolute, skipping the search domains of
	// resolv.conf). Required.
	Name string
	// Records is SRV (default) or A.
	Records string
	// Port is the port of every node found by A records; required with
	// A, refused with SRV (whose records carry ports).
	Port int
	// StableAddresses declares that the addresses found keep naming the
	// same servers across restarts: required to name nodes by A records,
	// and to accept SRV targets derived from addresses.
	StableAddresses bool
	// UseWeights takes SRV weights as node weights. Off by default:
	// CoreDNS's weights change with the number of endpoints.
	UseWeights bool
	// Resolver does the lookups; nil means net.DefaultResolver.
	Resolver *net.Resolver
	// Interval is how often the name is looked up again. Default 5s,
	// the TTL CoreDNS gives a service's records.
	Interval time.Duration
	// Timeout bounds one lookup. Default 2s: past it the view is stale.
	Timeout time.Duration
}

func (s *Source) interval() time.Duration { return durationOr(s.Interval, 5*time.Second) }
func (s *Source) timeout() time.Duration  { return durationOr(s.Timeout, 2*time.Second) }

func durationOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func (s *Source) resolver() *net.Resolver {
	if s.Resolver != nil {
		return s.Resolver
	}
	return net.DefaultResolver
}

// check validates the configuration; the error wraps
// [membership.ErrBadConfig] (and [ErrUnstableName] for A records without
// StableAddresses).
func (s *Source) check() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: dns %q: %s", membership.ErrBadConfig, s.Name, fmt.Sprintf(format, args...))
	}
	if s.Name == "" {
		return fmt.Errorf("%w: dns: no name to look up", membership.ErrBadConfig)
	}
	switch s.Records {
	case "", SRV:
		if s.Port != 0 {
			return bad("a port is given, but SRV records carry their own")
		}
	case A:
		if !s.StableAddresses {
			return fmt.Errorf("%w: dns %q: %w: A records name nodes by address; declare the addresses stable, or use SRV records, whose targets are names", membership.ErrBadConfig, s.Name, ErrUnstableName)
		}
		if s.Port < 1 || s.Port > 65535 {
			return bad("A records need a port 1..65535 (got %d)", s.Port)
		}
		if s.UseWeights {
			return bad("A records carry no weights")
		}
	default:
		return bad("records %q: want %s or %s", s.Records, SRV, A)
	}
	return nil
}

// Read looks the name up once. A name that does not exist gives a version
// without nodes. The error wraps [membership.ErrBadConfig],
// [membership.ErrBadContent] for an answer that names no usable node set
// (an invalid name, port or weight, an address-derived name), or
// [membership.ErrUnreachable] when the lookup failed or timed out.
func (s *Source) Read(ctx context.Context) (membership.Version, error) {
	if err := s.check(); err != nil {
		return membership.Version{}, err
	}
	nodes, err := s.lookup(ctx)
	if err != nil {
		return membership.Version{}, err
	}
	return membership.Version{Nodes: nodes, Resync: true}, nil
}

// Follow implements [membership.Source]: it looks the name up every
// Interval and yields each answer that differs from the last one taken.
// A failed lookup leaves the view stale, and is tried again sooner than
// Interval (membership.Poll's Retry); an answer it refuses leaves it
// stale too.
func (s *Source) Follow(ctx context.Context, r membership.Reporter) error {
	if err := s.check(); err != nil {
		return err
	}
	return membership.Poll{Ask: s.lookup, Interval: s.interval()}.Follow(ctx, r)
}

// lookup returns the nodes the name gives now, sorted by ID.
func (s *Source) lookup(ctx context.Context) ([]kolco.Node, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	var nodes []kolco.Node
	var err error
	if s.Records == A {
		nodes, err = s.lookupA(ctx)
	} else {
		nodes, err = s.lookupSRV(ctx)
	}
	if err != nil {
		return nil, err
	}
	membership.SortNodes(nodes)
	return nodes, nil
}

// failure classifies a resolver error: a name that does not exist is an
// answer (no nodes, nil error), anything else a failure to get one.
func (s *Source) failure(err error) error {
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return nil
	}
	return fmt.Errorf("%w: dns %q: %w", membership.ErrUnreachable, s.Name, err)
}

func (s *Source) lookupSRV(ctx context.Context) ([]kolco.Node, error) {
	_, records, err := s.resolver().LookupSRV(ctx, "", "", s.Name)
	if err != nil {
		if len(records) > 0 { // the resolver dropped records it could not read
			return nil, s.badAnswer("%v", err)
		}
		return nil, s.failure(err)
	}
	return s.srvNodes(records)
}

// srvNodes names a node by each SRV record's target. The error wraps
// [membership.ErrBadContent].
func (s *Source) srvNodes(records []*net.SRV) ([]kolco.Node, error) {
	nodes := make([]kolco.Node, 0, len(records))
	ports := map[string]uint16{}
	for _, rec := range records {
		if rec.Target == "." { // RFC 2782: the service is decidedly not available here
			continue
		}
		id := strings.ToLower(strings.TrimSuffix(rec.Target, "."))
		if id == "" {
			return nil, s.badAnswer("an SRV record without a target")
		}
		if rec.Port == 0 {
			return nil, s.badAnswer("target %s: port 0", id)
		}
		if p, dup := ports[id]; dup {
			if p != rec.Port {
				return nil, s.badAnswer("target %s listed with two ports, %d and %d", id, p, rec.Port)
			}
			continue
		}
		ports[id] = rec.Port
		if !s.StableAddresses && addressDerived(id) {
			return nil, s.badAnswer("target %s: %v (its first label is an address); give pods stable names, as a StatefulSet does, or declare addresses stable", id, ErrUnstableName)
		}
		n := kolco.Node{ID: id, Addr: net.JoinHostPort(id, strconv.Itoa(int(rec.Port)))}
		if s.UseWeights {
			if rec.Weight == 0 {
				return nil, s.badAnswer("target %s: SRV weight 0 is no placement weight", id)
			}
			n.Weight = float64(rec.Weight)
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}

func (s *Source) lookupA(ctx context.Context) ([]kolco.Node, error) {
	addrs, err := s.resolver().LookupNetIP(ctx, "ip", s.Name)
	if err != nil {
		return nil, s.failure(err)
	}
	seen := map[netip.Addr]bool{}
	nodes := make([]kolco.Node, 0, len(addrs))
	for _, a := range addrs {
		a = a.Unmap()
		if seen[a] {
			continue
		}
		seen[a] = true
		addr := netip.AddrPortFrom(a, uint16(s.Port)).String()
		nodes = append(nodes, kolco.Node{ID: addr, Addr: addr})
	}
	return nodes, nil
}

func (s *Source) badAnswer(format string, args ...any) error {
	return fmt.Errorf("%w: dns %q: %s", membership.ErrBadContent, s.Name, fmt.Sprintf(format, args...))
}

// addressDerived reports whether a host name's first label is an IP
// address with dashes for dots or colons, as Kubernetes names the
// endpoints of pods without a hostname ("10-0-0-7", "fd00--7").
func addressDerived(host string) bool {
	label, _, _ := strings.Cut(host, ".")
	if a, err := netip.ParseAddr(strings.ReplaceAll(label, "-", ".")); err == nil && a.Is4() {
		return true
	}
	a, err := netip.ParseAddr(strings.ReplaceAll(label, "-", ":"))
	return err == nil && a.Is6()
}
