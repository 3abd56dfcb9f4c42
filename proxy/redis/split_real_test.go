package redis

import (
	"bytes"
	"testing"
)

// hashTagShard maps a key to one of two servers by the text between its
// first '{' and the next '}' when there is one (a hash tag), else by the
// whole key: the sum of the bytes, odd or even.
func hashTagShard(key []byte) int {
	if i := bytes.IndexByte(key, '{'); i >= 0 {
		if j := bytes.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	sum := 0
	for _, c := range key {
		sum += int(c)
	}
	return sum % 2
}

// splitSteps run on one server and on two: split, same-server and
// any-server commands, hash tags keeping keys together.
var splitSteps = []string{
	"MSET k1 v1 k2 v2 k3 v3 k4 v4 k5 v5 k6 v6 k7 v7 k8 v8",
	"MGET k1 k2 k3 k4 k5 k6 k7 k8 k9 k10",
	"MGET k8 k1 k8 nope k2",
	"MGET k1",
	"EXISTS k1 k1 k2 k3 nope k4",
	"TOUCH k1 k2 k3 k4 k5 nope",
	"DEL k1 k3 nope k5",
	"UNLINK k2 k4 k6",
	"MGET k1 k2 k3 k4 k5 k6 k7 k8",
	"SET counter 10",
	"INCRBY counter 5",
	"GET counter",
	"SADD {s}a x y z",
	"SADD {s}b y z w",
	"SINTERCARD 2 {s}a {s}b",
	"SISMEMBER {s}a y",
	"SUNIONSTORE {s}c {s}a {s}b",
	"SCARD {s}c",
	"EVAL \"return redis.call('get', KEYS[1])\" 1 counter",
	"RENAME {s}c {s}d",
	"EXISTS {s}c {s}d",
	"COMMAND COUNT",
	"LPUSH list a",
	"MGET k7 list k8", // a list reads as nil in MGET
}

// TestSplitMatchesOneServer runs the same commands on one redis-server
// holding every key and, split and merged by a Splitter, on two servers
// sharing the keys: every reply must be the same, byte for byte.
func TestSplitMatchesOneServer(t *testing.T) {
	whole := startServer(t).dial(t)
	shards := []*conn{startServer(t).dial(t), startServer(t).dial(t)}
	var s Splitter
	for _, line := range splitSteps {
		req := mustRead(t, line)
		want := whole.send(AppendRequest(nil, req)).Data
		if err := s.Split(req, hashTagShard); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		replies := make([]Reply, len(s.Parts()))
		for i, p := range s.Parts() {
			srv := p.Server
			if srv == AnyServer {
				srv = 0
			}
			replies[i] = shards[srv].send(s.AppendPart(nil, i))
		}
		got, err := s.Merge(nil, replies)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n split %q\n whole %q", line, got, want)
		}
	}
	// The keys really were spread: each shard holds some of those left,
	// and together exactly as many as the whole.
	total := int64(0)
	for i, c := range shards {
		n, _ := Integer(c.do("DBSIZE").Data)
		if n == 0 {
			t.Errorf("shard %d is empty", i)
		}
		total += n
	}
	if n, _ := Integer(whole.do("DBSIZE").Data); n != total {
		t.Errorf("the shards hold %d keys, the whole %d", total, n)
	}
}
