package storecheck

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// TestTransactionModel: a transaction takes effect whole, at one point -
// a history where it is seen half done fails, though each key's own
// history is linearizable - and one of unknown outcome took effect whole
// or not at all; an INCR's error in it leaves its other commands done.
func TestTransactionModel(t *testing.T) {
	a, b := "lin:{t0}a", "lin:{t0}b"
	tx := func(cmds ...Input) Input { return Input{Op: "EXEC", Key: cmds[0].Key, Tx: cmds} }
	set := func(k, v string) Input { return Input{Op: "SET", Key: k, Arg: v} }
	get := func(k string) Input { return Input{Op: "GET", Key: k} }
	both := tx(set(a, "1"), set(b, "1"))
	setBoth := Output{Tx: []Output{{}, {}}}
	val, none := Output{Val: "1"}, Output{Nil: true}
	for _, tc := range []struct {
		name string
		ops  []porcupine.Operation
		ok   bool
	}{
		{"read whole", []porcupine.Operation{op(0, both, 0, setBoth, 1),
			op(1, tx(get(a), get(b)), 2, Output{Tx: []Output{val, val}}, 3)}, true},
		{"half seen by two reads", []porcupine.Operation{op(0, both, 0, setBoth, 10),
			op(1, get(a), 2, val, 3), op(1, get(b), 4, none, 5)}, false},
		{"the same writes apart", []porcupine.Operation{op(0, set(a, "1"), 0, Output{}, 10), op(2, set(b, "1"), 0, Output{}, 10),
			op(1, get(a), 2, val, 3), op(1, get(b), 4, none, 5)}, true},
		{"half seen by a transaction", []porcupine.Operation{op(0, both, 0, setBoth, 10),
			op(1, tx(get(a), get(b)), 2, Output{Tx: []Output{val, none}}, 3)}, false},
		{"lost", []porcupine.Operation{op(0, both, 0, setBoth, 1), op(1, get(b), 2, none, 3)}, false},
		{"unknown took effect", []porcupine.Operation{op(0, both, 0, Output{Unknown: true}, never),
			op(1, get(a), 2, val, 3), op(1, get(b), 4, val, 5)}, true},
		{"unknown did not", []porcupine.Operation{op(0, both, 0, Output{Unknown: true}, never),
			op(1, get(a), 2, none, 3), op(1, get(b), 4, none, 5)}, true},
		{"unknown took effect in half", []porcupine.Operation{op(0, both, 0, Output{Unknown: true}, never),
			op(1, get(a), 2, val, 3), op(1, get(b), 4, none, 5)}, false},
		{"an incr's error leaves the rest", []porcupine.Operation{op(0, set(a, "x"), 0, Output{}, 1),
			op(0, tx(Input{Op: "INCR", Key: a}, set(b, "1")), 2, Output{Tx: []Output{{Err: true}, {}}}, 3), op(1, get(b), 4, val, 5)}, true},
		{"single requests between", []porcupine.Operation{op(0, Input{Op: "INCR", Key: a}, 0, Output{N: 1}, 1),
			op(1, tx(Input{Op: "INCR", Key: a}, Input{Op: "APPEND", Key: b, Arg: "5"}), 2, Output{Tx: []Output{{N: 2}, {N: 1}}}, 3),
			op(0, get(a), 4, Output{Val: "2"}, 5), op(0, Input{Op: "DEL", Key: b}, 6, Output{N: 1}, 7)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if res, _ := Check(tc.ops, 10*time.Second); (res == porcupine.Ok) != tc.ok {
				t.Errorf("%v, want ok %v", res, tc.ok)
			}
		})
	}
}

// TestGroups: a hash tag's keys, and the transactions on them, are one
// partition of the check; keys without a tag each one of their own.
func TestGroups(t *testing.T) {
	for key, want := range map[string]string{
		"lin:{t0}a": "{t0}", "lin:{t0}b": "{t0}", "f:{t0}": "{t0}", "{t1}a{t0}": "{t1}",
		"lin:1": "lin:1", "a{}b": "a{}b", "a{b": "a{b", "a}b{": "a}b{",
	} {
		if got := groupOf(key); got != want {
			t.Errorf("group of %q: %q, want %q", key, got, want)
		}
	}
	r := &Run{cfg: Config{Keys: 2, Groups: 2, Prefix: "lin:"}}
	if got := r.Keys(); len(got) != 8 || got[1] != "lin:1" || got[2] != "lin:{t0}a" || got[7] != "lin:{t1}c" {
		t.Errorf("keys %q", got)
	}
	ops := []porcupine.Operation{op(0, Input{Op: "GET", Key: "lin:{t0}a"}, 0, Output{Nil: true}, 1),
		op(0, Input{Op: "EXEC", Key: "lin:{t0}b", Tx: []Input{{Op: "GET", Key: "lin:{t0}b"}, {Op: "INCR", Key: "lin:{t0}c"}}}, 2, Output{Unknown: true}, never),
		op(0, Input{Op: "GET", Key: "lin:0"}, 0, Output{Nil: true}, 1), op(0, Input{Op: "GET", Key: "lin:1"}, 0, Output{Nil: true}, 1),
		op(0, Input{Op: "EXEC", Key: "lin:{t1}a", Tx: []Input{{Op: "GET", Key: "lin:{t1}a"}, {Op: "GET", Key: "lin:{t1}b"}}}, 2, Output{Unknown: true}, never)}
	parts := Model.Partition(ops)
	if len(parts) != 3 || len(parts[0]) != 2 {
		t.Errorf("%d partitions (want 3: {t0}, lin:0, lin:1; an unknown read is left out), the first of %d requests", len(parts), len(parts[0]))
	}
}

// TestParseExec: EXEC's array is each command's reply, an INCR's error
// among them; a reply of another shape leaves the outcome unknown.
func TestParseExec(t *testing.T) {
	in := Input{Op: "EXEC", Key: "k", Tx: []Input{{Op: "SET", Key: "k", Arg: "1"}, {Op: "GET", Key: "j"}, {Op: "INCR", Key: "j"}}}
	for _, c := range []struct {
		name  string
		elems []string
		ok    bool
		out   Output
	}{
		{"replies", []string{"+OK\r\n", "$-1\r\n", ":1\r\n"}, true, Output{Tx: []Output{{}, {Nil: true}, {N: 1}}}},
		{"an incr's error", []string{"+OK\r\n", "$1\r\nx\r\n", "-ERR value is not an integer or out of range\r\n"}, true,
			Output{Tx: []Output{{}, {Val: "x"}, {Err: true}}}},
		{"another error", []string{"+OK\r\n", "$1\r\nx\r\n", "-ERR Connection timed out\r\n"}, false, Output{}},
		{"too few", []string{"+OK\r\n", "$-1\r\n"}, false, Output{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			reply := "*" + string(rune('0'+len(c.elems))) + "\r\n"
			for _, e := range c.elems {
				reply += e
			}
			out, ok := parseExec(in, reply, c.elems)
			if ok != c.ok || ok && !equal(out, c.out) {
				t.Errorf("%q: %+v, %v; want %+v, %v", reply, out, ok, c.out, c.ok)
			}
		})
	}
	if _, ok := parseExec(in, "*-1\r\n", nil); ok {
		t.Error("a nil EXEC read as replies")
	}
}
