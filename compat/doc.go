// Package compat builds, by name, the placement of each system kolco
// reproduces bit for bit - twemproxy, libmemcached, nginx, HAProxy, Redis
// Cluster, go-redis, pymemcache, Cassandra, Envoy and grpc-go's ring_hash -
// from that system's own description of its servers: its configuration
// file, its tool's output or its server list, in its own syntax. It is to
// those systems what package algo is to kolco's own algorithms, so that the
// kolco command, the planner and the proxy offer them all behind one name.
//
// # Inputs
//
// An [Input] holds what a system is described by; each system reads some of
// its fields ([Info.Takes]) and [Build] refuses the others, so that a
// setting is never silently ignored. A whole configuration file with
// several pools (nutcracker.yml), upstreams (nginx.conf) or backends
// (haproxy.cfg) is read with [Input.Select] naming one; a file with one
// needs no choice, and [Blocks] lists the choices. nutcracker.yml is read
// leniently, for placement alone: each pool's servers, hash, hash_tag and
// distribution, every other key - nutcracker's or kolco proxy's - ignored.
//
// # Errors
//
// Build's errors can be told apart without reading their text: an
// [InputError] (the fields given are wrong for the system, a mistake of
// whoever assembled the Input), a [SelectError] (the configuration's
// choices, listed), or the system's own errors about what its description
// holds, which wrap the sentinels of package kolco.
package compat
