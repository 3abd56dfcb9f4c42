// Package sim runs experiments on placement algorithms: how many keys move
// when nodes join or leave ([Remap]), how evenly keys spread ([Balance]),
// who absorbs a failed node's keys ([Failure]), what share weighted nodes
// obtain ([Weights]), how many zones replica sets span ([Replicas]), how
// requests load the nodes under hot keys ([Hotkeys]) and how long a lookup
// takes ([Lookup]). Each takes one or more [Setup]s - an algorithm of
// package algo with its options - and a key sample ([keys.Set]), and
// returns a typed result whose Tables method renders it as tables
// ([report.Table]) for people or for programs.
//
// Beside each measurement stands its closed form (package
// [github.com/kolco-dev/kolco/sim/theory]), from Karger et al.,
// "Consistent Hashing and Random Trees" (STOC 1997): a change of k nodes
// moves k/(N+k) of the keys, and a ring of V points per node has arc
// spread sqrt((N-1)/(NV+1)). The hotkeys experiment uses Mirrokni, Thorup
// and Zadimoghaddam, "Consistent Hashing with Bounded Loads" (SODA 2018),
// through package bounded.
//
// # The measurement packages
//
// Each of the packages below sim has one job:
//
//   - [github.com/kolco-dev/kolco/sim/keys]: key samples (synthetic keys,
//     key files with sizes and rates) and where a placement puts them,
//     hashed once per hash function and placed on a ring in one merge;
//   - [github.com/kolco-dev/kolco/sim/workload]: distributions of key sizes
//     and request rates, parsed once, and request streams;
//   - [github.com/kolco-dev/kolco/sim/plan]: what one change costs, from
//     the placements before and after, with the cache's database load;
//   - [github.com/kolco-dev/kolco/sim/article]: the article's
//     measurements, reproduced exactly;
//   - [github.com/kolco-dev/kolco/sim/theory] and
//     [github.com/kolco-dev/kolco/sim/stats]: the closed forms, and
//     statistics rounded as Python rounds them;
//   - [github.com/kolco-dev/kolco/sim/report]: tables for people and for
//     programs.
package sim
