// Package etcd is a membership source and store on etcd, for fleets of
// proxies and clients that must agree on one node set: nodes are keys
// under a prefix, followed by a watch from a revision, registered with
// leases so that a node whose registration stops being renewed leaves by
// itself, and changed by transactions guarded by the revision they were
// computed from.
//
// It uses the official client, go.etcd.io/etcd/client/v3, and through it
// gRPC; only this package does, so that a program placing keys, or
// following a file or DNS, never links them.
//
// # Layout
//
// Under a prefix P (such as "/kolco/cache/"):
//
//	P nodes/<ID>   a node: JSON {"weight": 2, "zone": "eu-1", "addr": "10.0.0.7:11211", "drained": true},
//	               every field optional (see [ParseValue])
//	P state        the state of a history-dependent placement, if any: a
//	               [membership.PlacementState] as JSON, kept current by every write
//	P changed      touched by every guarded write, so that a removal shows in the revision guard
//
// # Guarantees
//
// A watch starts from the revision of a full read and applies the events
// of each revision together: a change that touched several nodes in one
// transaction is one [membership.Version], and no version is built from
// half of it. The client resumes the watch after a disconnect from the
// last revision seen; when the store has compacted its history past that
// revision, the source reads the prefix again in full and says so
// ([membership.Version.Resync]) instead of skipping the gap. While etcd
// does not answer, the watcher keeps its last version and reports it
// stale; it catches up by itself when etcd is back.
//
// The placement state is what makes a history-dependent placement (jump,
// anchor, ...) the same in every process that follows the store: every
// write that changes the nodes that take keys computes the next state from
// the stored one and writes it in the same transaction, so that the state
// read at a revision is that of the nodes read with it. Changes made
// without a write - a registration's lease expiring, a registration -
// leave it behind the nodes until the next write, or until a follower set
// to write it back ([membership.FollowConfig].WriteState) does.
//
// Writes ([Store.Apply], [Store.Update]) are transactions that succeed
// only if nothing under the prefix changed after the revision they were
// computed from, so that of two writers working from the same revision
// one wins and the other gets [membership.ErrConflict]; a node's lease
// expiring is caught by the same guard for the nodes a write touches.
//
// Checked against etcd 3.4.23 (Debian 12's etcd-server), which the tests
// start: range reads and prefix watches from a revision, progress
// requests, leases with keep-alives and expiry, compaction, and
// transactions comparing revisions over a range.
package etcd
