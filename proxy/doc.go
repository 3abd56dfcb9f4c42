// Package proxy is a memcached and Redis sharding proxy that takes a
// twemproxy (nutcracker) configuration unchanged and places every key
// exactly where twemproxy does, then adds what twemproxy lacks: reload
// without restart, a choice between rehashing and failing fast when a
// server fails, active health probes, the meta protocol, and more than one
// core.
//
// The operator's manual is docs/proxy.md in the repository, and the pages
// it links: stores, fleets, failures, changes, TLS, operations.
//
// Placement is ketama consistent hashing (Richard Jones, last.fm, 2007), an
// instance of Karger et al., "Consistent Hashing and Random Trees" (STOC
// 1997), or twemproxy's modula, both from package compat/twemproxy; or, for
// a pool that does not need twemproxy's placement, any of kolco's own
// algorithms by name (package algo: ring, rendezvous, maglev, jump, ...).
//
// # Configuration
//
// A file is nutcracker.yml: each top-level key is a pool with nutcracker's
// keys (listen, hash, hash_tag, distribution, timeout, backlog, preconnect,
// server_connections, auto_eject_hosts, server_retry_timeout,
// server_failure_limit, servers, redis, redis_auth, redis_db). kolco's
// keys sit beside them in a pool (ejection, health_check,
// max_client_connections, client_idle_timeout, max_value_size, max_keys,
// max_pending, client_buffer_limit, flush_all, warm, sweep, and key_hash,
// vnodes, replicas, zones and zone for kolco's distributions,
// redis_client_auth and redis_server_auth for Redis pools, and
// membership), and proxy-wide settings under the top-level key "kolco"
// (metrics_listen, stats_listen, stats_interval, admin_listen,
// admin_token_file, admin_peers, buffer_limit, threads, log_level,
// shutdown_timeout). See [PoolConfig] and [GlobalConfig]; the defaults,
// with the reason for each, are [DefaultPoolConfig] and
// [DefaultGlobalConfig]. Durations are milliseconds in the file, as in
// nutcracker, and time.Duration in the types. A configuration that cannot
// be served is a [*ConfigError] naming the pool and key at fault.
//
// [LoadConfig], [New], [Server.Start], [Server.Reload] and
// [Server.Shutdown] are all a program needs; kolco proxy adds the signals
// (SIGHUP reloads, SIGUSR2 hands the listening sockets to a new process
// through [Server.ListenerFiles] and [Server.Inherit], SIGTERM shuts down),
// the watch of the file, nutcracker's command line and [AdaptThreads].
//
// # Operating it
//
// Beside the pools the proxy serves Prometheus metrics (metrics_listen),
// nutcracker's JSON stats port (stats_listen; [DescribeStats]) and an admin
// endpoint (admin_listen) that says in JSON which server holds a key under
// the placement in use now ([Location]) and each pool's servers, health
// and shares of keys ([PoolStatus]). A pool may take its servers from a
// membership source - etcd, DNS or a file ([Membership]) - shared by a
// fleet of proxies: the admin endpoint reports each pool's revision and
// fingerprint ([MembershipStatus]), equal in two proxies exactly when they
// place every key alike, and a status page compares them with the other
// proxies' (admin_peers). Memory is bounded by what requests
// and replies in flight hold, per client (client_buffer_limit) and in all
// (buffer_limit), rather than by a cap on one value. A shutdown drains the
// clients: each is closed once idle, every request it sent answered.
//
// # Failures
//
// A request whose server cannot be reached or does not answer within the
// pool's timeout gets "SERVER_ERROR ..." for that server's keys only; in a
// multi-key get those keys are reported as misses so that the other
// servers' values still reach the client. The line names the server once
// and the cause once ("SERVER_ERROR 10.0.0.1:11211: connect: connection
// refused"); in code the failure is a [*ServerError] wrapping its cause. After server_failure_limit
// consecutive failures a server is ejected. With ejection "rehash" its keys
// move to the live servers (twemproxy's auto_eject_hosts): with a kolco
// distribution only its keys, each to the next server up in its
// preference list, and back when it is restored; with ketama and modula as
// nutcracker rebuilds its continuum. With "fail-fast" they keep failing
// until it is back. An ejected server is probed every health_check.interval
// and restored when it answers; under rehash, and with replicas, what its
// keys were written elsewhere meanwhile is settled first: the pool notes
// each such key while the server is out (up to outage_journal keys) and
// copies the values written onto it before it serves again, never
// flushing it (see docs/failures.md).
//
// # Membership changes
//
// A reload that adds, removes, re-weights or readdresses servers is applied
// to a kolco distribution's running placement as one change
// (kolco.Diff, Mutable.Apply), so that a history-dependent algorithm
// (jump, anchor, dx, slots, ...) keeps every surviving key in place. What
// decides such a placement beyond its servers is kept in a state file
// (kolco.state_file, by default beside the configuration file) and
// restored at start; see [GlobalConfig].
//
// # Replicas
//
// With replicas set above 1, a pool of a kolco distribution keeps each key
// on that many servers, in distinct zones with the ring and zones: writes go
// to every copy, reads to the copy in the proxy's zone that is not down. A
// down server keeps its place (its keys are read from their other copies)
// and is emptied with flush_all before it serves again. cas is refused.
//
// # Redis
//
// A pool with redis: true speaks RESP2 (package proxy/redis): commands of
// one key go to its server; MGET, MSET, DEL, UNLINK, EXISTS and TOUCH are
// split by server and merged; other commands of several keys go to their
// server when it is one, and are refused otherwise. PING, ECHO, QUIT,
// SELECT 0, AUTH and HELLO are answered by the proxy, and unsupported
// commands get an error with the connection kept. redis_auth is required
// of clients and given to servers, as nutcracker does; kolco's
// redis_client_auth and redis_server_auth set them apart, per server.
// redis_db is selected on every server connection. Probes send PING; a
// server answering -LOADING is down until it is ready ([ErrServerLoading]).
// A Redis client is served on one goroutine, in rounds: the requests it
// has sent are read and forwarded, then their replies written, in order;
// a round ends at the client's client_buffer_limit. The buffer limits
// count a request's arguments past its first 64 KiB and the bulk strings
// of replies.
//
// Listeners and servers may be unix sockets, as in nutcracker.
package proxy
