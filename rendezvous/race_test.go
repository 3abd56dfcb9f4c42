//go:build race

package rendezvous_test

// raceEnabled skips the 4.2-million-hash reproduction of the article's
// figure under -race, which checks concurrency, not figures.
const raceEnabled = true
