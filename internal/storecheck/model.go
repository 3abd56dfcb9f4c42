package storecheck

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// state is one key's value in the model.
type state struct {
	exists bool
	val    string
}

// group is the state of the keys of one hash tag, or of one key without
// a tag: the value of each key that exists.
type group map[string]state

// Model is the commands' model, a hash-tag group of keys at a time (a key
// without a tag is a group of its own): a transaction's commands take
// effect together, at one point, and a request whose outcome is unknown
// took effect, whole, or did not. A group rather than a key: a reader of
// one key seeing a transaction's write and of another not yet seeing its
// write to it is linearizable key by key, and is not of the group.
var Model = porcupine.NondeterministicModel{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byGroup := map[string][]porcupine.Operation{}
		var groups []string
		for _, op := range history {
			if noEffect(op) {
				continue
			}
			g := groupOf(op.Input.(Input).Key)
			if byGroup[g] == nil {
				groups = append(groups, g)
			}
			byGroup[g] = append(byGroup[g], op)
		}
		out := make([][]porcupine.Operation, 0, len(groups))
		for _, g := range groups {
			out = append(out, byGroup[g])
		}
		return out
	},
	Init: func() []interface{} { return []interface{}{group(nil)} },
	Step: func(st, in, out interface{}) []interface{} {
		g, i, o := st.(group), in.(Input), out.(Output)
		next, want := g.apply(i)
		if o.Unknown {
			return []interface{}{g, next}
		}
		if equal(o, want) {
			return []interface{}{next}
		}
		return nil
	},
	Equal: func(a, b interface{}) bool { return maps.Equal(a.(group), b.(group)) },
	DescribeOperation: func(in, out interface{}) string {
		return describe(in.(Input)) + " -> " + describeOutput(in.(Input), out.(Output))
	},
}

// groupOf returns the group of key: its hash tag, "{" and "}" with what
// is between them, when the part after its first "{" up to the next "}" is
// not empty, as Redis Cluster and a pool's hash_tag "{}" place keys; else
// the key.
func groupOf(key string) string {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			return key[i : i+j+2]
		}
	}
	return key
}

// apply returns the group's state after in, and in's reply: for a
// transaction, each command's in turn.
func (g group) apply(in Input) (group, Output) {
	if in.Op != "EXEC" {
		s, out := apply(g[in.Key], in)
		return g.with(in.Key, s), out
	}
	outs := make([]Output, len(in.Tx))
	for i, cmd := range in.Tx {
		var s state
		s, outs[i] = apply(g[cmd.Key], cmd)
		g = g.with(cmd.Key, s)
	}
	return g, Output{Tx: outs}
}

// with returns the group with key's state s; g is left as it is, as the
// states porcupine keeps are values.
func (g group) with(key string, s state) group {
	if g[key] == s {
		return g
	}
	h := make(group, len(g)+1)
	maps.Copy(h, g)
	if s.exists {
		h[key] = s
	} else {
		delete(h, key)
	}
	return h
}

// equal reports whether two replies are the same.
func equal(a, b Output) bool {
	return a.Unknown == b.Unknown && a.Err == b.Err && a.Nil == b.Nil && a.Val == b.Val && a.N == b.N &&
		slices.EqualFunc(a.Tx, b.Tx, equal)
}

// describe names a request, as porcupine's drawing shows it.
func describe(in Input) string {
	if in.Op != "EXEC" {
		return strings.TrimSpace(in.Op + " " + in.Key + " " + in.Arg)
	}
	cmds := make([]string, len(in.Tx))
	for i, c := range in.Tx {
		cmds[i] = describe(c)
	}
	return "MULTI; " + strings.Join(cmds, "; ") + "; EXEC"
}

// describeOutput names in's reply o.
func describeOutput(in Input, o Output) string {
	switch {
	case o.Unknown:
		return "unknown"
	case o.Err:
		return "error"
	case in.Op == "EXEC":
		outs := make([]string, len(o.Tx))
		for i, t := range o.Tx {
			outs[i] = describeOutput(in.Tx[i], t)
		}
		return "[" + strings.Join(outs, ", ") + "]"
	case in.Op == "SET":
		return "OK"
	case in.Op != "GET":
		return strconv.FormatInt(o.N, 10)
	case o.Nil:
		return "nil"
	}
	return strconv.Quote(o.Val)
}

// noEffect reports whether op leaves every state as it is whether or not
// it took effect, and says nothing of it: a GET or an EXPIRE (whose time
// to live no run outlives) of unknown outcome, or such a transaction of
// GETs. Left out of a group's history, it is one request fewer that may
// take effect at any time for the checker to place.
func noEffect(op porcupine.Operation) bool {
	in, out := op.Input.(Input), op.Output.(Output)
	if !out.Unknown {
		return false
	}
	for _, c := range in.Tx {
		if c.Op != "GET" {
			return false
		}
	}
	return in.Op == "GET" || in.Op == "EXPIRE" || in.Op == "EXEC"
}

// apply returns the state after in, and in's reply.
func apply(s state, in Input) (state, Output) {
	switch in.Op {
	case "SET":
		return state{exists: true, val: in.Arg}, Output{}
	case "GET":
		if !s.exists {
			return s, Output{Nil: true}
		}
		return s, Output{Val: s.val}
	case "INCR":
		v := int64(0)
		if s.exists {
			var ok bool
			if v, ok = redisInt(s.val); !ok || v == 1<<63-1 {
				return s, Output{Err: true}
			}
		}
		v++
		return state{exists: true, val: strconv.FormatInt(v, 10)}, Output{N: v}
	case "APPEND":
		v := s.val + in.Arg
		return state{exists: true, val: v}, Output{N: int64(len(v))}
	case "DEL":
		if !s.exists {
			return s, Output{N: 0}
		}
		return state{}, Output{N: 1}
	case "EXPIRE":
		if !s.exists {
			return s, Output{N: 0}
		}
		return s, Output{N: 1}
	}
	return s, Output{Err: true}
}

// redisInt parses s as Redis takes a string for an integer: digits with
// an optional minus sign, no leading zero (but "0" itself), within int64.
func redisInt(s string) (int64, bool) {
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || digits[0] == '0' && (len(digits) > 1 || s != digits) {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// Check checks the history for linearizability, within timeout; the
// description of a failure names the key, or the hash tag of a group.
func Check(history []porcupine.Operation, timeout time.Duration) (porcupine.CheckResult, string) {
	res, info := porcupine.CheckOperationsVerbose(Model.ToModel(), history, timeout)
	if res != porcupine.Illegal {
		return res, ""
	}
	var b strings.Builder
	for _, part := range info.PartialLinearizationsOperations() {
		for _, lin := range part {
			if len(lin) > 0 {
				fmt.Fprintf(&b, "a partial linearization of %d operations on %s\n", len(lin), groupOf(lin[0].Input.(Input).Key))
				break
			}
		}
	}
	return res, b.String()
}
