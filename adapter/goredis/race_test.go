//go:build race

package goredis_test

// raceEnabled reports a -race build, under which sync.Pool drops what it
// is given at random, so that a pooled buffer is allocated again.
const raceEnabled = true
