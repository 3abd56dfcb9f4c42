package redis_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kolco-dev/kolco/proxy/redis"
)

// A client pipelines requests, as arrays of bulk strings or inline; the
// Reader gives each its command, its class and its keys.
func ExampleReader() {
	in := "*3\r\n$3\r\nSET\r\n$4\r\nuser\r\n$3\r\nann\r\n" +
		"MGET user {s}a {s}b\r\n" +
		"EVAL \"return 1\" 1 user\r\n"
	r := redis.NewReader(strings.NewReader(in), redis.Limits{})
	var req redis.Request
	for r.Read(&req) == nil {
		var keys []string
		for i := range req.NumKeys() {
			keys = append(keys, string(req.Key(i)))
		}
		fmt.Println(req.Cmd.Name(), req.Cmd.Class(), keys)
	}
	// Output:
	// set single [user]
	// mget split [user {s}a {s}b]
	// eval same-server [user]
}

// A bad request comes as an *Error with the reply redis-server would send
// and whether the connection can go on.
func ExampleError() {
	in := "GET\r\n" + // wrong number of arguments: answered, go on
		"*1\r\n$-1\r\n" + // a bad bulk length: answered, then close
		"PING\r\n"
	r := redis.NewReader(strings.NewReader(in), redis.Limits{})
	var req redis.Request
	for {
		var e *redis.Error
		if err := r.Read(&req); !errors.As(err, &e) {
			break
		}
		fmt.Printf("%q close=%v\n", e.Reply, e.Close)
		if e.Close {
			break
		}
	}
	// Output:
	// "-ERR wrong number of arguments for 'get' command\r\n" close=false
	// "-ERR Protocol error: invalid bulk length\r\n" close=true
}

// An MGET over two servers: one part per server, and the servers' replies
// merged into one in the order of the client's keys.
func ExampleSplitter() {
	var req redis.Request
	_ = redis.NewReader(strings.NewReader("MGET a b c\r\n"), redis.Limits{}).Read(&req)
	server := map[string]int{"a": 0, "b": 1, "c": 0}
	var s redis.Splitter
	_ = s.Split(&req, func(key []byte) int { return server[string(key)] })
	for i, p := range s.Parts() {
		fmt.Printf("server %d: %q\n", p.Server, s.AppendPart(nil, i))
	}
	// What the two servers answer: a and c from server 0, b from server 1.
	answers := []string{"*2\r\n$1\r\nA\r\n$-1\r\n", "*1\r\n$1\r\nB\r\n"}
	replies := make([]redis.Reply, len(answers))
	for i, a := range answers {
		data, elems, _ := redis.NewReplyReader(strings.NewReader(a), redis.ReplyLimits{}).Read(nil, nil)
		replies[i] = redis.Reply{Data: data, Elems: elems}
	}
	merged, _ := s.Merge(nil, replies)
	fmt.Printf("client: %q\n", merged)
	// Output:
	// server 0: "*3\r\n$4\r\nmget\r\n$1\r\na\r\n$1\r\nc\r\n"
	// server 1: "*2\r\n$4\r\nmget\r\n$1\r\nb\r\n"
	// client: "*3\r\n$1\r\nA\r\n$1\r\nB\r\n$-1\r\n"
}

// A same-server command whose keys map to different servers is refused;
// the connection goes on.
func ExampleSplitter_crossServer() {
	var req redis.Request
	_ = redis.NewReader(strings.NewReader("SINTER x y\r\n"), redis.Limits{}).Read(&req)
	var s redis.Splitter
	err := s.Split(&req, func(key []byte) int { return int(key[0]) % 2 })
	fmt.Println(errors.Is(err, redis.ErrCrossServer))
	fmt.Printf("%q\n", err.(*redis.Error).Reply)
	// Output:
	// true
	// "-ERR keys of 'sinter' map to different servers; hash tags can keep them on one\r\n"
}

// A ReplyReader reads one whole reply and says where each element of an
// array lies.
func ExampleReplyReader() {
	in := "*3\r\n:1\r\n*2\r\n+a\r\n$-1\r\n$3\r\nxyz\r\n+NEXT\r\n"
	rr := redis.NewReplyReader(strings.NewReader(in), redis.ReplyLimits{})
	reply, elems, _ := rr.Read(nil, nil)
	for _, sp := range elems {
		fmt.Printf("%q\n", reply[sp.Start:sp.End])
	}
	next, _, _ := rr.Read(nil, nil)
	fmt.Printf("next: %q\n", next)
	// Output:
	// ":1\r\n"
	// "*2\r\n+a\r\n$-1\r\n"
	// "$3\r\nxyz\r\n"
	// next: "+NEXT\r\n"
}

// The Append functions write RESP into a caller's buffer.
func ExampleAppendArrayHeader() {
	b := redis.AppendArrayHeader(nil, 4)
	b = redis.AppendBulk(b, []byte("v"))
	b = redis.AppendNil(b)
	b = redis.AppendInt(b, 42)
	b = redis.AppendError(b, "ERR no\nnewlines")
	fmt.Printf("%q\n", b)
	// Output:
	// "*4\r\n$1\r\nv\r\n$-1\r\n:42\r\n-ERR no newlines\r\n"
}

// The command table, as COMMAND INFO gives it, with the proxy's class.
func ExampleLookup() {
	for _, name := range []string{"get", "mset", "zunionstore", "object|encoding", "blpop", "hello"} {
		c := redis.Lookup(name)
		first, last, step := c.KeyRange()
		fmt.Println(c.Name(), c.Arity(), first, last, step, c.Movable(), c.Class())
	}
	// Output:
	// get 2 1 1 1 false single
	// mset -3 1 -1 2 false split
	// zunionstore -4 1 1 1 true same-server
	// object|encoding 3 2 2 1 false single
	// blpop -3 1 -2 1 false blocking
	// hello -1 0 0 0 false local
}

// AppendLocal answers the connection commands as a server with one
// database answers them.
func ExampleAppendLocal() {
	r := redis.NewReader(strings.NewReader("PING\r\nSELECT 0\r\nSELECT 3\r\nHELLO 3\r\nQUIT\r\n"), redis.Limits{})
	var req redis.Request
	for r.Read(&req) == nil {
		reply, closing := redis.AppendLocal(nil, &req)
		fmt.Printf("%q close=%v\n", reply, closing)
	}
	// Output:
	// "+PONG\r\n" close=false
	// "+OK\r\n" close=false
	// "-ERR DB index is out of range\r\n" close=false
	// "-ERR unknown command 'HELLO', with args beginning with: '3' \r\n" close=false
	// "+OK\r\n" close=true
}
