// Package membership follows the node set of a placement as it changes:
// a [Source] yields versioned node sets, and a [Watcher] reads one in a
// goroutine of its own, hands each new [Version] to its reader and reports
// whether its view is current.
//
// Many proxies and clients placing keys on the same servers must agree on
// who the servers are; a client with a different view reads and writes
// different servers. This package does not build that agreement: it reads
// it from a store that already has it - a file on one box ([File]), DNS on
// Kubernetes (package membership/dns), etcd for fleets (package
// membership/etcd, whose watch delivers every change in revision order),
// or a gossip pool for fleets without a store (package membership/gossip,
// whose members converge on one node set but not on one order of changes:
// it is [Unordered], and history-dependent algorithms are refused on it).
//
// # Versions
//
// A [Version] is a whole node set at a revision. Versions of one watch come
// in increasing revision order, each one valid (distinct, valid nodes
// sorted by ID) and whole: a change that touched several nodes in one write
// is one version, never a version per node. A version also carries what
// the store holds beside the nodes: nodes drained (listed, placing no
// keys) and the placement state ([PlacementState]) that history-dependent
// algorithms need so that a placement built later from the store equals
// one that followed every change.
//
// # Staleness
//
// A watcher keeps its last version when the store cannot be reached or
// gives an answer it refuses (a half-written file, a malformed value), and
// says so: [Status] reports when the store last answered and why the view
// may be behind. When the store is back the watcher catches up by itself.
//
// # Following
//
// A [Follower] keeps a placement in step with a source: [Follow] starts
// it, and each new version is applied to the placement as a change
// (kolco.Diff through kolco.Mutable, so that a change moves only the
// keys it must) and published as an immutable [View] that readers take
// without a lock. Each view carries the placement's fingerprint
// (kolco.Fingerprint): two processes following one store agree exactly
// when their fingerprints are equal. [Follower.Report] reports the
// revision, fingerprint, nodes, when the view was applied and whether it
// is stale, with the process's local health beside them
// ([Follower.SetDown]), for an admin endpoint and a fleet-wide status
// (package fleet compares them).
//
// For history-dependent algorithms (jump, anchor, dx, slots, ...) the
// node set does not decide the placement alone: the store keeps a
// [PlacementState] beside the nodes, and the placement at a version is a
// function of that version, the same in every process. Writers of
// membership compute the next state with each change and write both in one
// guarded transaction (package membership/etcd does it for every write, so
// "kolco members" does); a follower only reads it, unless asked to write
// it back after changes made without it, such as a lease expiring
// ([FollowConfig].WriteState).
//
// # Writing a source
//
// A [Source] reads the store once ([Source.Read]) or follows it
// ([Source.Follow]), reporting each version and each answer or failure to a
// [Reporter]; the [Watcher] owns the goroutine, validates what it is given
// and keeps the status. Sources own no goroutine that outlives Follow.
package membership
