//go:build !race

package goredis_test

const raceEnabled = false
