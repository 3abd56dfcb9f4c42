// Package gossip is a membership source over a gossip pool
// (hashicorp/memberlist: SWIM, Das, Gupta and Motivala 2002, "SWIM:
// Scalable Weakly-consistent Infection-style Process Group Membership
// Protocol", with Lifeguard's refinements, 2017), for fleets without a
// consensus store.
//
// # Members
//
// Every process of the fleet is a member of one pool ([Join]): a sidecar
// beside each cache server is a node member ([RoleNode], "kolco members
// register --gossip"), carrying the node's ID (its name in the pool),
// address, weight, zone and whether it is drained in memberlist's node
// metadata ([Meta], at most [MaxMetaSize] bytes); proxies and clients are
// observers ([RoleObserver]), never placed. A member joins by naming one
// or more seeds, leaves gracefully ([Pool.Close]: the others drop it at
// once), or is found dead by the failure detector: a member that stops
// answering probes is suspected, and declared dead unless it refutes the
// suspicion in time ([Config.FailureTimeout]). The traffic is encrypted
// with a keyring of AES keys ([Config].Keys, [ParseKeys]).
//
// # Versions
//
// A [Pool] is a [membership.Source]: each member's own view of the pool -
// the node members, sorted by ID, drained ones apart - is a
// [membership.Version] whose revision increases each time the node set
// changes in that view. Revisions are local: two members that agree on the
// node set may number it differently, which is why agreement is read off
// the placement's fingerprint, never the revision. A member alone in the
// pool with seeds to join keeps its last view and reports it stale rather
// than take every other member for dead.
//
// A member with seeds publishes its first view once it has the pool's
// state whole: memberlist merges the state a seed sends one member at a
// time, and a view taken halfway would place every key on the first node
// merged. So the view is held until the merge is done, and until the state
// merged is that of a member in the pool: a seed that has not joined its
// own pool yet (its seeds are down, or it is joining them at that moment)
// knows only itself, and an observer joined through it stays alone until
// it has. Nodes started together, each with the others as seeds, form the
// pool by joining one another; observers never do. A member alone tries
// the members it has learnt of beside its seeds, so that nodes whose seeds
// are observers meet through them and form the pool too.
//
// # The failure detector
//
// A member that stops answering probes is suspected, and declared dead
// unless it refutes the suspicion in time: [Config.SuspicionMult] probe
// intervals at least ([Config.FailureTimeout]), longer until other
// members confirm the suspicion (Lifeguard's confirmations), while a
// member that misses its own probes' answers probes more slowly
// (Lifeguard's local health, [Status].Health). Each member decides by
// its own timers and the others take its word, so every member of a pool
// needs the same settings. The defaults, memberlist's for a LAN, give a
// suspect 4 s: beside 8 busy processes on 2 cores an idle fleet of eight
// members saw no live member found dead in 5 minutes, where 100 ms
// probes with memberlist's multiplier of 4 (0.4 s) saw 34 and 9 view
// changes in two runs, and with 8 (0.8 s) 2 and 0; a member killed is
// found dead 6-7 s after at the defaults, about 1 s after at 100 ms.
//
// memberlist corrects a member's view otherwise only at its next exchange
// of the whole state with another member, up to 30 s later, which two
// cases needed sooner. A member found dead by one member alone (it missed
// the suspect's refutation, being busy or cut off) is pinged by that one
// for as long as a suspect may take to refute, and asked for its state
// once it answers: it is taken back at once. A node's member restarted at
// another address before the pool found the old one dead is refused by
// each member while it holds the old one alive (memberlist's conflict);
// each member asks it for its state once it finds the old one dead.
//
// # Why history-dependent algorithms are refused
//
// jump, jumpback, anchor, slots, dx and the other algorithms algo lists as
// history-dependent place keys by the order in which nodes were removed,
// not by the node set alone: two followers that applied the same removals
// in different orders place keys differently. Gossip gives no order to
// agree on. Each member learns of joins and deaths by infection, in its
// own order; two failures close together reach different members in
// different orders, a member paused past the failure timeout misses the
// intermediate states altogether, and a member that starts later sees only
// the present. A replicated placement state would need the members to
// agree on one sequence of changes, which is consensus; a CRDT that merges
// concurrent removals (as dskit's memberlist KV merges ring tokens) would
// have to invent an order that a lagging member's history contradicts.
// So [Pool] implements [membership.Unordered], and membership.Follow
// refuses those algorithms on it with an error wrapping
// [membership.ErrUnordered]. The algorithms whose placement is a function
// of the node set alone (ring, rendezvous, maglev, multiprobe, modulo, and
// the compat systems) need only that the members converge on one node
// set, which gossip gives: every member reports the same fingerprint once
// the failure detector and the gossip have settled. For a history-
// dependent algorithm across a fleet, use etcd (package membership/etcd),
// which keeps the placement state beside the nodes under one revision.
package gossip
