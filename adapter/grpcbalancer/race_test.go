//go:build race

package grpcbalancer

// raceEnabled reports a -race build, under which sync.Pool drops what it
// is given at random.
const raceEnabled = true
