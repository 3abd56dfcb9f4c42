// Package redis reads and writes RESP2 and RESP3, the Redis protocol, as a
// sharding proxy sees it: requests from clients, replies from servers, and the
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
// merges them ([Splitter.Merge]). PING, ECHO, QUIT, SELECT, AUTH and
// HELLO are answered locally ([AppendLocal], [AppendAuth]); COMMAND goes
// to any one server; transactions ([ClassTransaction]), pub/sub
// ([ClassPubSub]) and blocking commands ([ClassBlocking]) are the proxy's
// to serve on connections of the client's own, and SCAN, KEYS and DBSIZE
// ([ClassEveryServer]) to ask of every server; the rest is refused with an error and the connection kept
// ([ErrUnsupported]).
//
// # Where kolco differs from nutcracker
//
// nutcracker (twemproxy 0.5) closes the client's connection on a command
// it does not support, on HELLO, CLIENT SETINFO, SELECT 0 and INFO, and
// sends a multi-key command whose keys are on several servers (SINTER,
// RENAME, EVAL with several keys, ...) to the first key's server, where
// it silently works on the wrong data. Here:
//   - unsupported commands (BLMPOP, XREAD,
//     RANDOMKEY, CLUSTER, INFO, ...) get "-ERR '<cmd>' is not
//     supported by the proxy: <why>" and the connection stays open, so
//     that clients which send CLIENT SETINFO on connecting (go-redis v9)
//     go on;
//   - HELLO gets the "unknown command" error of a server older than
//     Redis 6 from [AppendLocal], which RESP3 clients take as the signal
//     to use RESP2; a proxy that speaks RESP3 answers it itself
//     ([ParseHello], [AppendMapHeader], [AppendPushHeader], [AppendNull]);
//   - SELECT 0 is +OK, another database "-ERR DB index is out of range",
//     as a server with one database answers;
//   - a same-server command whose keys map to several servers gets an
//     error naming the command, never a wrong answer; EVAL with numkeys 0,
//     which nutcracker refuses by closing the connection, gets an error;
//   - a part's error in a split command becomes the client's reply as the
//     server gave it, where nutcracker answers a generic error of its own;
//   - a bad numkeys (EVAL, ZUNIONSTORE, SINTERCARD, LMPOP, ...) gets
//     redis-server's own reply from the proxy; for FCALL the server would
//     first answer "Function not found" for a function it does not have.
//
// Where redis-server itself waits for ever, the proxy answers at once: a
// NUL byte in an inline command or a length line keeps the server from
// finding the line's end until 64 KiB have come, when it replies "too big
// inline request" (or "too big mbulk count string", "too big bulk count
// string") and closes; the proxy sends that reply and closes on the NUL.
//
// # Reading replies
//
// A [ReplyReader] reads one whole server reply (simple strings, errors,
// integers, bulk strings, nil, arrays nested to [ReplyLimits.MaxDepth],
// and with [ReplyLimits.RESP3] RESP3's types)
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
