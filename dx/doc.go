// Package dx places keys with DxHash: a fixed array of slots, each working
// or not, and for each key a pseudo-random sequence of slots of which the
// first working one is the key's.
//
// The algorithm is from Chao Dong, Fang Wang and Dan Feng, "DxHash: A
// Scalable Consistent Hash Based on the Pseudo-Random Sequence"
// (arXiv:2107.07930, 2021-2023). The sequence is the one of the authors'
// C++ implementation (github.com/ChaosD/DxHash): a second seed, the key's
// low 32 bits times 421757 plus one, and a CRC-32C step of the SSE 4.2
// instruction crc32q from it, first of the key hash, then of each value;
// the slot of a value is its low bits. The tests check 32 slots printed by
// the authors' code and a digest of a million more; kolco computes the
// CRC step with tables in pure Go (the tests compare it with hash/crc32).
// Where the authors' lookup gives up after 4 x Capacity probes (it returns
// -1), kolco takes the first working slot after the last one probed.
//
// # Weighted DxHash
//
// The paper proposes a weighted variant. Here a node of weight w is
// accepted, when its slot comes up in a key's sequence, with probability
// w/top, drawn from the next value of the sequence; top is the largest
// weight the placement has ever held (at least 1), and a node of weight
// top is accepted without a draw, so that a placement with equal weights
// is exactly the unweighted DxHash. Shares follow weights exactly in
// expectation: the tests hold them within 5% plus sampling noise.
//
// # Properties
//
//   - Lookup cost: one key hash, then on average Capacity x top / (sum of
//     the weights) probes, each a CRC step: one crc32q instruction on
//     amd64 without weights, else eight table reads (2 to 4 probes for
//     the default capacity, twice the nodes rounded up to a power of two,
//     with equal weights); no lock and no allocation. A key whose
//     sequence cycles without a working slot (rare, the generator being a
//     32-bit affine map) pays 4 x Capacity probes and the scan.
//   - Memory: 4 bytes per slot of capacity for the lookup (the node's index),
//     8 more per slot once weights differ, and 20 or so per slot for the
//     writers (IDs and the free slots). The paper's 1 bit per slot leaves
//     the slot-to-node map to the caller; a kolco placement returns the
//     node. Each change copies that state: O(Capacity) time.
//   - Balance: every key is uniform over the working slots, so loads are
//     those of a uniform random assignment. The generator is linear in the
//     key hash's bits, so a weak hash (fnv1a, crc32) is finalized first
//     (see [Config.Hash]). Under every hash of package keyhash, over 11
//     nodes and 200,000 keys, the tests hold the largest load within 1.10
//     of the mean and the smallest above 0.90 (measured: 1.020 and 0.981 at
//     worst).
//   - Disruption: minimal, under arbitrary changes: adding a node (no
//     heavier than top) moves keys only onto it, removing any node moves
//     only its keys, and a reweight up to top moves keys only onto or off
//     the node. Raising top (a node heavier than any before) rescales every
//     acceptance and moves keys between unchanged nodes. 10 -> 11 nodes
//     moves 8.92% of the test keys (1/11 = 9.09%).
//   - Replicas: [Placement.LocateN] goes on along the key's sequence,
//     skipping the owners found: replica i+1 is where the key goes when
//     replicas 1..i are removed.
//   - Arbitrary removal: supported; any node may leave. The set may never
//     exceed the fixed [Config.Capacity] ([ErrCapacity]). The paper's
//     Scale, which doubles the array, would move keys between unchanged
//     nodes (the low bits of every value mean another slot), so kolco
//     refuses instead; choose the capacity for the largest set.
//
// # Cost against anchor
//
// The number of probes does not decide what dx costs against anchor: with
// every slot and every bucket working (1024 nodes, capacity 1024: one
// probe, one hop) the lookup in Go measured 10.2 ns against anchor's 6.8
// (1.51x; the key hash alone 3.1), and at the default capacities, where dx
// makes 2 probes and anchor 1.69 hops on average, 28.7 against 18.5
// (1.55x). What dx paid more was its generator: each value, the first
// included, a CRC-32C step of eight table reads in Go, where anchor's first
// bucket is one multiplication and each further hop one SplitMix64 mix.
// The authors' code runs the step on the SSE 4.2 instruction crc32q; Go
// reaches it only through hash/crc32, whose call through a function value
// makes the eight bytes escape (a lookup must not allocate), and an
// assembly function per step would pay a call Go cannot inline per probe.
//
// So on amd64 with SSE 4.2 the lookup runs the whole probe loop in
// assembly (probe_amd64.s): one call per lookup, a crc32q per value, and
// four values at a time, their slots read together and the first working
// one chosen by conditional moves, so that only a key whose four slots
// are all inactive (a seventh to a sixteenth of keys at the default
// capacities) takes a branch that may mispredict. It serves
// [Placement.Locate], LocateID and LocateIndex when no weights differ;
// weighted placements, [Placement.LocateN] and other processors (or the
// purego build tag) run the loop in Go (probe_other.go), and the tests
// hold both to the authors' vectors and to each other.
//
// Measured in alternating processes, three rounds of each (bench module,
// `go test -run '^$' -bench 'Removals/nodes=(100|1000|10000)/(anchor|dx)/removed=0'
// -benchtime 1000000x`, ns per lookup, CPU time, load average 23-29), at
// 100, 1000 and 10,000 nodes:
//
//   - the loop in Go (-tags purego): dx 29.8-38.1, 26.9-29.2 and
//     37.6-54.3; anchor 16.1-17.3, 16.9-18.4 and 17.9-21.9 (1.6-2.8x);
//   - in assembly one value at a time: dx 22.0-24.9, 19.4-22.6 and
//     26.3-32.6, anchor 16.5-20.9, 15.9-17.8 and 19.8-33.6 (0.9-1.4x;
//     the loop's exit mispredicted about once a lookup);
//   - four at a time, as kept: dx 10.4-13.8, 9.4-10.1 and 15.3-21.1,
//     anchor 15.5-20.7, 15.9-20.4 and 17.4-25.2 (0.6-1.04x): dx is now
//     the faster of the two but at 10,000 nodes, where they are even.
//
// `go run ./cmd/compare -removals` (interleaved rounds, load average 37)
// gave 0.70x, 0.66x and 0.99x anchor at 100, 1000 and 10,000 nodes, and
// at 1024 nodes 0.58x at the default capacities but 1.37x with every slot
// working (8.9 ns against 6.5, one probe against one hop): there the call
// into assembly, which Go does not inline, and the three values computed
// past the first are what dx pays more.
//
// # Placement depends on history
//
// [New] gives nodes slots 0, 1, ... in ID order, and Add takes the most
// recently freed slot (a stack). Lookups depend only on which node holds
// which slot, the weights and top; the order of removals does not matter,
// but which slot a later add takes does. Undoing changes in reverse order
// restores the placement exactly. Within one call, Add and Remove take
// nodes in ID order, so the order of arguments does not matter.
package dx
