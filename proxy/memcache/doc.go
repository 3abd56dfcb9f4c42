// Package memcache reads and writes the memcached text and meta protocols, as
// a proxy sees them: requests from clients, replies from servers.
//
// The protocol is memcached's own ("memcached protocol.txt", Brad Fitzpatrick
// and the memcached authors, 2003-2022); there is no paper. This package
// implements the subset a sharding proxy forwards: the storage commands
// (set, add, replace, append, prepend, cas), the retrieval commands (get,
// gets, gat, gats), delete, incr, decr, touch, version, quit, flush_all,
// stats, verbosity, and the meta commands mg, ms, md, ma, mn and me.
//
// # Reading requests
//
// A [Reader] parses one request at a time into a caller-owned [Request],
// reusing its buffers. Errors come as [*Error] values that say what to send
// back and whether the stream can go on: a malformed command line is
// answered with CLIENT_ERROR (or ERROR for an unknown command) and the next
// line is read; a data block that does not end where its length says, or a
// line longer than the limit, cannot be resynchronised and the connection
// must be closed ([Error.Close]).
//
// # Forwarding
//
// [AppendRequest] encodes a request for a server, and [AppendRetrieval] a
// retrieval of some of its keys, for a proxy that splits a multi-key get
// over the servers that own them. Meta requests are sent without their q
// flag, so that every forwarded request gets exactly one reply and a proxy
// can pair replies with requests; [Quiet] then tells which replies the
// client asked not to see. [ReplyReader.Read] reads one whole reply of a
// server to a given request, and for retrievals reports where each VALUE
// entry lies so that the replies of several servers can be merged in the
// order of the client's keys.
package memcache
