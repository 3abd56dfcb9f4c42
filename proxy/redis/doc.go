// Package redis reads and writes RESP2, the Redis protocol, as a sharding
// proxy sees it: replies from servers, and the encoders that write RESP.
//
// The protocol is the "Redis serialization protocol specification"
// (Salvatore Sanfilippo and the Redis authors; RESP2 is the standard since
// Redis 2.0, 2010). There is no paper.
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
// [AppendArrayHeader], [AppendArgs], ...) append RESP to a caller's
// buffer, allocating only when it must grow.
package redis
