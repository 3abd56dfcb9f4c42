package storecheck

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/kolco-dev/kolco/internal/resp"
)

// TestHashModel: each field of each hash is a register of its own: a
// lost HSET, or an HGET of a value the field never held, fails; HSET
// answers 1 for a field it created, 0 for one it replaced; a request of
// unknown outcome may have taken effect or not.
func TestHashModel(t *testing.T) {
	set := func(f, v string) HashInput { return HashInput{Op: "HSET", Key: "h", Field: f, Value: v} }
	get := func(f string) HashInput { return HashInput{Op: "HGET", Key: "h", Field: f} }
	for _, tc := range []struct {
		name string
		ops  []porcupine.Operation
		ok   bool
	}{
		{"read your write", []porcupine.Operation{op2(0, set("a", "1"), 0, Output{N: 1}, 1), op2(1, get("a"), 2, Output{Val: "1"}, 3)}, true},
		{"fields apart", []porcupine.Operation{op2(0, set("a", "1"), 0, Output{N: 1}, 1), op2(1, set("b", "2"), 2, Output{N: 1}, 3),
			op2(1, get("a"), 4, Output{Val: "1"}, 5)}, true},
		{"lost write", []porcupine.Operation{op2(0, set("a", "1"), 0, Output{N: 1}, 1), op2(0, set("a", "2"), 2, Output{N: 0}, 3),
			op2(1, get("a"), 4, Output{Val: "1"}, 5)}, false},
		{"field lost", []porcupine.Operation{op2(0, set("a", "1"), 0, Output{N: 1}, 1), op2(1, get("a"), 2, Output{Nil: true}, 3)}, false},
		{"created twice", []porcupine.Operation{op2(0, set("a", "1"), 0, Output{N: 1}, 1), op2(1, set("a", "2"), 2, Output{N: 1}, 3)}, false},
		{"unknown took effect", []porcupine.Operation{op2(0, set("a", "1"), 0, Output{Unknown: true}, never), op2(1, get("a"), 2, Output{Val: "1"}, 3)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if res := CheckHash(tc.ops, 10*time.Second); (res == porcupine.Ok) != tc.ok {
				t.Errorf("%v, want ok %v", res, tc.ok)
			}
		})
	}
}

func op2(client int, in HashInput, call int64, out Output, ret int64) porcupine.Operation {
	return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
}

// TestHashRealServer: the hash workload against one redis-server is
// linearizable, and Digest sees the fields it wrote: a hash's digest
// changes with them, and reads the same for the same content.
func TestHashRealServer(t *testing.T) {
	addr := startRedis(t)
	c, err := resp.Dial(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Do("HSET", "h", "x", "1"); err != nil {
		t.Fatal(err)
	}
	before, err := Digest(context.Background(), addr, "h")
	if err != nil {
		t.Fatal(err)
	}
	r := StartHash(HashConfig{Addrs: []string{addr}, Hashes: []string{"h", "g"}, Seed: 1, Limit: 300})
	history := r.Wait()
	if r.Answered < 1000 || r.Unknown > 0 {
		t.Fatalf("%d answered, %d unknown: %v", r.Answered, r.Unknown, r.Errors)
	}
	if res := CheckHash(history, time.Minute); res != porcupine.Ok {
		t.Fatalf("one server's history is not linearizable: %v", res)
	}
	after, err := Digest(context.Background(), addr, "h")
	if err != nil || after == before || !strings.HasPrefix(after, "hash of ") {
		t.Errorf("digest %q before, %q after (%v)", before, after, err)
	}
	if again, _ := Digest(context.Background(), addr, "h"); again != after {
		t.Errorf("digest %q, then %q", after, again)
	}
}
