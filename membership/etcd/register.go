package etcd

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/membership"
)

// Registration keeps a node registered under a lease, in a goroutine it
// owns: the node stays in the membership while the lease is renewed and
// leaves by itself, within the lease's TTL, once renewals stop - when the
// registering process dies, or its host, or its link to etcd. A server
// that cannot register itself (memcached) gets a small sidecar that does
// ("kolco members register").
type Registration struct {
	store  *Store
	member Member
	ttl    int64 // seconds
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex // guards status
	status RegistrationStatus
}

// RegistrationStatus says whether a registration holds.
type RegistrationStatus struct {
	// Lease is the lease the node is registered with; 0 while it is not.
	Lease int64
	// LastRenewal is when etcd last confirmed the lease.
	LastRenewal time.Time
	// Err is why the node is not registered now (etcd unreachable, the
	// lease lost and not yet replaced), or nil.
	Err error
}

// Register registers node with a lease of ttl (at least one second, in
// whole seconds) and keeps renewing it until ctx is done or Close is
// called. It returns once the node is registered, or with the error of
// that one attempt: a caller that must wait for etcd calls it again. Once
// registered, a lost lease (etcd away for longer than the TTL) is
// replaced by itself when etcd is back.
//
// A node registered earlier under another lease (a previous run of the
// sidecar) is taken over, keeping its drained flag. Cancelling ctx stops
// the renewals and leaves the node to expire, as a crash would; Close
// removes it at once.
//
// The error wraps [kolco.ErrDuplicateNode] when the ID is listed without
// a lease (added for good: remove it first), [ErrBadChange] for an invalid
// node or TTL, or [membership.ErrUnreachable].
func (s *Store) Register(ctx context.Context, node kolco.Node, ttl time.Duration) (*Registration, error) {
	if err := (Edit{Change: kolco.Change{Add: []kolco.Node{node}}}).validate(); err != nil {
		return nil, err
	}
	if ttl < time.Second || ttl > time.Duration(math.MaxInt32)*time.Second {
		return nil, fmt.Errorf("%w: lease TTL %v: want 1s or more", ErrBadChange, ttl)
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &Registration{
		store:  s,
		member: Member{Node: node},
		ttl:    int64((ttl + time.Second - 1) / time.Second),
		cancel: cancel,
		done:   make(chan struct{}),
	}
	lease, err := r.register(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	go r.run(ctx, lease)
	return r, nil
}

// run renews the lease until ctx is done, registering the node again
// whenever the lease is lost. It ends early when registering again fails
// for a reason other than etcd being away (the ID added for good
// meanwhile, the store closed), leaving that reason in the status.
func (r *Registration) run(ctx context.Context, lease clientv3.LeaseID) {
	defer close(r.done)
	retry := newBackoff(r.store.checkInterval())
	for {
		r.keepAlive(ctx, lease)
		if ctx.Err() != nil {
			return
		}
		r.setStatus(0, fmt.Errorf("%w: lease %x lost; registering %q again", membership.ErrUnreachable, lease, r.member.ID))
		var err error
		for lease, err = r.register(ctx); err != nil; lease, err = r.register(ctx) {
			r.setStatus(0, err)
			if !errors.Is(err, membership.ErrUnreachable) || retry.wait(ctx) != nil {
				return
			}
		}
		retry.reset()
	}
}

// keepAlive renews lease until it is lost or ctx is done.
func (r *Registration) keepAlive(ctx context.Context, lease clientv3.LeaseID) {
	cli, err := r.store.client()
	if err != nil {
		return
	}
	renewals, err := cli.KeepAlive(ctx, lease)
	if err != nil {
		return
	}
	for range renewals {
		r.setStatus(lease, nil)
	}
}

// register grants a lease and puts the node's key under it, taking over a
// key under another lease.
func (r *Registration) register(ctx context.Context) (clientv3.LeaseID, error) {
	s := r.store
	cli, err := s.client()
	if err != nil {
		return 0, err
	}
	rctx, cancel := s.request(ctx)
	defer cancel()
	grant, err := cli.Grant(rctx, r.ttl)
	if err != nil {
		return 0, s.unreachable(err)
	}
	key := s.prefix + nodesKey + r.member.ID
	m := r.member
	for cmp := clientv3.Compare(clientv3.CreateRevision(key), "=", 0); ; {
		resp, err := cli.Txn(rctx).If(cmp).
			Then(clientv3.OpPut(key, string(EncodeValue(m)), clientv3.WithLease(grant.ID))).
			Else(clientv3.OpGet(key)).Commit()
		if err != nil {
			if ctx.Err() != nil {
				// Given up (stopped) with the put's answer lost: it may
				// have been made, and the lease is revoked, as far as
				// etcd answers, so that the node does not stay for its
				// TTL. Not while registering goes on: the retry takes
				// the key over under a new lease, keeping it drained.
				revoke, cancel := s.request(context.WithoutCancel(ctx))
				_, _ = cli.Revoke(revoke, grant.ID)
				cancel()
			}
			return 0, s.unreachable(err)
		}
		if resp.Succeeded {
			r.setStatus(grant.ID, nil)
			return grant.ID, nil
		}
		kvs := resp.Responses[0].GetResponseRange().GetKvs()
		if len(kvs) == 0 {
			cmp = clientv3.Compare(clientv3.CreateRevision(key), "=", 0) // removed meanwhile
			continue
		}
		if kvs[0].Lease == 0 {
			cli.Revoke(rctx, grant.ID)
			return 0, fmt.Errorf("%w: %q is listed without a lease (added for good): remove it before registering it", kolco.ErrDuplicateNode, m.ID)
		}
		if old, err := ParseValue(m.ID, kvs[0].Value); err == nil {
			m.Drained = old.Drained
		}
		cmp = clientv3.Compare(clientv3.ModRevision(key), "=", kvs[0].ModRevision)
	}
}

func (r *Registration) setStatus(lease clientv3.LeaseID, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status.Lease, r.status.Err = int64(lease), err
	if lease != 0 {
		r.status.LastRenewal = time.Now()
	}
}

// Status says whether the registration holds now.
func (r *Registration) Status() RegistrationStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status
}

// Done returns a channel closed when the renewals have stopped: ctx is
// done, Close was called, or the node could not be registered again (see
// the status).
func (r *Registration) Done() <-chan struct{} { return r.done }

// Close stops the renewals and revokes the lease, removing the node at
// once; ctx bounds the revocation. After a Close the node is not
// registered, whatever the error.
func (r *Registration) Close(ctx context.Context) error {
	r.cancel()
	<-r.done
	lease := r.Status().Lease
	if lease == 0 {
		return nil
	}
	cli, err := r.store.client()
	if err != nil {
		return err
	}
	rctx, cancel := r.store.request(ctx)
	defer cancel()
	if _, err := cli.Revoke(rctx, clientv3.LeaseID(lease)); err != nil {
		return r.store.unreachable(err)
	}
	r.setStatus(0, nil)
	return nil
}
