// Package redis reads and writes RESP2, the Redis protocol, as a sharding
// proxy sees it: requests from clients, replies from servers, and the
// table that says which arguments of each command are keys.
//
// The protocol is the "Redis serialization protocol specification"
// (Salvatore Sanfilippo and the Redis authors; RESP2 is the standard since
// Redis 2.0, 2010). There is no paper. Where the specification leaves
// room, this package does what redis-server 7.0.15 does, checked against
// the real server by the tests: the proxy answers malformed bytes with the
// server's replies and closes the connection exactly when the server
// would.
//
// # Reading requests
//
// A [Reader] parses one request at a time, pipelined or not, into a
// caller-owned [Request], reusing its buffers: an array of bulk strings,
// or an inline command split as redis-server splits it (quotes and
// escapes). It looks the command up in the table ([Lookup], [Command]),
// checks its arity and finds its keys. Errors are [*Error] values that
// say what to reply and whether the stream can go on: a protocol error
// (a bad length, a missing '$', unbalanced quotes, a limit passed) closes
// the connection, as redis-server does; an unknown command, a wrong number
// of arguments or a bad numkeys is answered and the next request read.
// [Limits] bound what one request may hold; memory grows with the bytes
// that arrive, never with a length a client announces.
//
// # Routing
//
// Each command has a [Class]. A [Splitter] routes a request with the
// caller's function from key to server (hash tags are the caller's):
// single-key and same-server commands go to one server, and a
// same-server command whose keys map to several servers is refused
// ([ErrCrossServer]); MGET, MSET, DEL, UNLINK, EXISTS and TOUCH are split
// into one request per server and their replies merged as nutcracker
// merges them ([Splitter.Merge]). COMMAND goes to any one server; the
// rest is refused with an error and the connection kept
// ([ErrUnsupported]).
//
// # Reading replies
//
// A [ReplyReader] reads one whole server reply (simple strings, errors,
// integers, bulk strings, nil, arrays nested to [ReplyLimits.MaxDepth])
// with a loop and an explicit stack, and says where each element of an
// array lies ([Span]) so that the replies of several servers can be
// merged. A reply over the limits is read and dropped, the stream kept in
// step.
//
// # Writing
//
// The Append functions ([AppendBulk], [AppendError], [AppendInt],
// [AppendArrayHeader], [AppendArgs], [AppendRequest], ...) append RESP to a caller's
// buffer, allocating only when it must grow.
package redis
