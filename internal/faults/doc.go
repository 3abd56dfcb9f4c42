// Package faults hunts for what no single test imagined: it runs real
// memcached and redis-servers, Sentinel shards and their Sentinels, etcd,
// gossip sidecars and several "kolco proxy" processes, draws from a seed a
// combination of the options users run and a schedule of faults, applies
// the faults while clients write and read through the proxies, and checks
// the clients' histories - in the spirit of Jepsen (Kingsbury, 2013-) and
// of Antithesis-style seeded schedules that replay.
//
// # The matrix
//
// A seed draws every axis on its own: memcached or Redis; for Redis a
// cache or a store; ejection none, rehash or fail-fast; servers from the
// configuration (changed by reloads), a file, etcd, gossip or Sentinel;
// one or two copies of each key; reads from Sentinel's replicas; and the
// distribution (twemproxy's ketama and modula, and each of kolco's).
// A combination that "kolco proxy --check" refuses is skipped with the
// reason it prints, and the seed draws again, so that every refusal the
// matrix meets is shown.
//
// # The faults
//
// SIGSTOP and SIGCONT, and kill -9 and a start again, empty or with its
// data, of servers, Sentinel primaries and replicas, Sentinels, etcd and
// proxies; SIGHUP reloads and SIGUSR2 handovers of proxies; membership
// changes through the pool's source; a link between the proxies and a
// server made slow, stalled or cut ([Relay]); a proxy starved of CPU by
// busy processes pinned to its core with taskset. Faults overlap: about
// one starts every 1.5 s, each lasting up to a few seconds.
//
// A schedule leaves out what the proxy documents as outside its promise
// (a store's server restarted empty; a proxy restarted while a server it
// wrote around is down; a Redis cache changed twice), naming the
// documentation, and a Sentinel primary is failed as an operator would
// fail it without Redis's own window of loss: its replica first in step,
// and started again once the Sentinels have decided. A Sentinel is stopped
// for 2.5 s at least, past its tilt trigger: one continued sooner fails a
// healthy primary over at once, and Redis drops what the old primary
// acknowledged until the failover ends (see sentinelPause).
//
// # The checks
//
// A store's history (SET, GET, INCR, APPEND, DEL, EXPIRE of two clients
// a proxy, ending with a read of every key) is checked for
// linearizability with porcupine (package internal/storecheck), and its
// keys for acknowledged writes no final read found. A cache's history
// (set, delete, get of one and of several keys) is checked against
// [CacheModel]: a read may miss, but never returns a value older than one
// acknowledged before it began. Each proxy has clients and keys of its
// own in a cache: the proxies of a fleet each settle their own writes.
//
// # Running it
//
// The test that drives it is TestFaultSchedule in cmd/kolco, whose test
// binary runs as the kolco program. [FromEnv] reads the environment:
//
//	go test -run TestFaultSchedule ./cmd/kolco                      # the short seeds, as CI runs them
//	KOLCO_FAULTS_SEED=17 go test -run TestFaultSchedule -v ./cmd/kolco       # replay seed 17
//	KOLCO_FAULTS_SEEDS=200 go test -timeout 0 -run TestFaultSchedule ./cmd/kolco   # 200 long seeds
//	KOLCO_FAULTS_UNTIL=30m go test -timeout 0 -run TestFaultSchedule ./cmd/kolco   # until one fails
//
// A failing seed prints its combination, its schedule, what was applied
// when, the proxies' logs, and the command that replays it.
// KOLCO_FAULTS_EXCLUDE leaves out combinations or faults
// ("stall,sentinel+rehash"); faults found and not fixed yet are left out
// by default ([Open]).
//
// Every process a run starts dies with it: each is started from one
// thread locked for the run with a parent-death signal, and killed by the
// test's cleanup; a proxy's process group holds what its handovers start.
package faults
