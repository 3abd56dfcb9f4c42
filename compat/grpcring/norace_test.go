//go:build !race

package grpcring_test

const raceEnabled = false
