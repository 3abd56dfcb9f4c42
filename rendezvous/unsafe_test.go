//go:build !purego

package rendezvous_test

// purego is true in the portable build, whose separator mode allocates.
const purego = false
