// Package sim measures placement algorithms: how many keys move when nodes
// join or leave, how uneven the load becomes, what a failure does to the
// survivors, what weighted nodes and replica sets obtain, and how hot keys
// load the nodes. Package [github.com/kolco-dev/kolco/sim/plan] plans one
// change of membership.
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
// its options) and a key sample ([keys.Set]), and return a typed result
// whose Tables method renders it as tables ([report.Table]) for people or
// for programs. They place keys with [keys.Assign], which hashes a sample
// once per hash function and places it on a ring in one merge.

package sim
