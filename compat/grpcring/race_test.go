//go:build race

package grpcring_test

// raceEnabled reports a -race build, ten times slower per request: the
// comparison then sends fewer of them.
const raceEnabled = true
