//go:build !race

package kolcotest

// raceEnabled reports a -race build, whose instrumentation makes lookups
// 5-20 times slower; the property checks then use fewer keys (see scaled).
const raceEnabled = false
