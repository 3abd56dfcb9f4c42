package proxy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kolco-dev/kolco/fleet"
)

// peerTimeout bounds the status page's question to one peer: a peer that
// does not answer in that time is reported unreachable, and the page is
// not held up longer.
const peerTimeout = 2 * time.Second

// askPeers asks each peer for its membership statuses, all at once, each
// within peerTimeout, and returns the answers of distinct processes other
// than self (this proxy's instance ID), and in same the peers that were
// this proxy or a process already asked under another address: a
// template shared by a fleet lists every proxy in each one's admin_peers,
// its own address among them, and one process must count once.
func askPeers(ctx context.Context, client *http.Client, peers []string, token []byte, self string) (distinct, same []fleet.Answer) {
	return fleet.Distinct(fleet.AskWith(ctx, client, peers, string(token), peerTimeout), self)
}

// agreement compares the pool's status here with the peers' answers.
func agreement(self string, ms MembershipStatus, peers []fleet.Answer) fleet.Agreement {
	reports := []fleet.Report{ms.Report(self)}
	for _, p := range peers {
		reports = append(reports, p.Report(ms.Pool))
	}
	return fleet.Compare(reports)
}

// sweepFleet is the fleetCheck of a server's pools: what a pool's sweep
// needs of the server to ask its fleet, kept lock-free, since a sweep
// must never wait for the server's lock, which a reload holds while it
// closes pools and waits for their sweeps.
type sweepFleet struct {
	peers   atomic.Pointer[[]string]               // kolco.admin_peers, as asked (https with admin_peer_ca_file)
	client  atomic.Pointer[http.Client]            // what they are asked with
	token   atomic.Pointer[[]byte]                 // the admin token peers are asked with
	sources atomic.Pointer[map[string]*poolSource] // the pools' sources, by name

	instanceOnce sync.Once
	instanceID   string // this process's, drawn once (see fleet.InstanceHeader)
}

// instance returns this process's instance ID, which the admin endpoint
// sends with its answers, so that a peer list naming this proxy counts it
// once.
func (f *sweepFleet) instance() string {
	f.instanceOnce.Do(func() {
		b := make([]byte, 8)
		_, _ = rand.Read(b) // crypto/rand.Read does not fail
		f.instanceID = hex.EncodeToString(b)
	})
	return f.instanceID
}

// setPeers records kolco.admin_peers of the configuration in force, as
// they are asked, and the client that asks them.
func (f *sweepFleet) setPeers(peers []string, client *http.Client) {
	f.client.Store(client)
	f.peers.Store(&peers)
}

// asker returns the peers and the client to ask them with.
func (f *sweepFleet) asker() ([]string, *http.Client) {
	var peers []string
	if l := f.peers.Load(); l != nil {
		peers = *l
	}
	c := f.client.Load()
	if c == nil {
		c = http.DefaultClient
	}
	return peers, c
}

// setSources records the pools' sources; nil once they stop.
func (f *sweepFleet) setSources(m map[string]*poolSource) { f.sources.Store(&m) }

// check asks the fleet whether it places p's keys as p does. It returns
// the reason to defer ("differs", "stale", "unreachable", or "retiring"
// while a proxy still answers requests routed by the placement it
// replaced) and what to log, or empty strings when the sweep may run.
func (f *sweepFleet) check(ctx context.Context, p *pool) (reason, why string) {
	var ps *poolSource
	if m := f.sources.Load(); m != nil {
		ps = (*m)[p.name]
	}
	ms := poolEntry{p: p, ps: ps}.membershipStatus()
	peers, client := f.asker()
	var token []byte
	if t := f.token.Load(); t != nil {
		token = *t
	}
	answers, _ := askPeers(ctx, client, peers, token, f.instance())
	a := agreement("this proxy", ms, answers)
	switch {
	case len(a.Unreachable) > 0:
		var names []string
		for _, u := range a.Unreachable {
			names = append(names, fmt.Sprintf("%s (%v)", u.Name, u.Err))
		}
		return "unreachable", strings.Join(names, ", ")
	case !a.Agree():
		var names []string
		for _, an := range answers {
			if theirs := an.Pools[p.name]; theirs.Fingerprint != ms.Fingerprint {
				names = append(names, fmt.Sprintf("%s (revision %d, fingerprint %s)", an.Addr, theirs.Revision, theirs.Fingerprint))
			}
		}
		return "differs", fmt.Sprintf("%s, where this proxy places by fingerprint %s", strings.Join(names, ", "), ms.Fingerprint)
	case len(a.Stale) > 0:
		return "stale", strings.Join(a.Stale, ", ") + " may be behind the source"
	}
	// Agreeing on the placement is not enough: a proxy reports its new
	// one as soon as a reload swaps it in, while the pool it replaced may
	// still send a request by the old one - a read that a store's move
	// elsewhere would make miss, or a write it would strand.
	var retiring []string
	if ms.Retiring {
		retiring = append(retiring, "this proxy")
	}
	for _, an := range answers {
		if an.Pools[p.name].Retiring {
			retiring = append(retiring, an.Addr)
		}
	}
	if len(retiring) > 0 {
		return "retiring", strings.Join(retiring, ", ") + " still answer requests routed by the placement before"
	}
	return "", ""
}
