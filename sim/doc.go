// Package sim measures placement algorithms and plans membership changes:
// how many keys and bytes move when nodes join, leave or change weight,
// which nodes give and take, how uneven the load becomes, what a failure
// does to the survivors, and what the cache misses cost the database.
//
// The closed forms printed beside the measurements (package
// [github.com/kolco-dev/kolco/sim/theory]) come from Karger et al.,
// "Consistent Hashing and Random Trees" (STOC 1997) - a change of k nodes
// moves k/(N+k) of the keys, and a ring of V points per node has arc spread
// sqrt((N-1)/(NV+1)) - and from the seed article whose measurements
// [RunArticle] reproduces exactly. The hotkeys experiment uses Mirrokni,
// Thorup and Zadimoghaddam, "Consistent Hashing with Bounded Loads" (SODA
// 2018), through package bounded.
//
// # Experiments
//
// [Remap], [Balance], [Failure], [Weights], [Replicas], [Hotkeys] and
// [Lookup] each take one or more [Setup]s (an algorithm of package algo and
// its options) and a [KeySet], and return a typed result whose Tables
// method renders it as [report.Table]s, for people or for programs. [Plan] computes what one change costs on a
// key sample, with the article's cost model ([DatabaseLoad]).
//
// # Speed
//
// Keys are hashed once per hash function on all cores and kept with their
// sorted order, so a ring places ten million keys in one merge of two
// sorted arrays ([ring.Ring.OwnersSorted]); other algorithms look keys up in
// parallel chunks. Synthetic keys live in one string, so lookups allocate
// nothing.
package sim
