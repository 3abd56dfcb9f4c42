package redis

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// value is a decoded reply, for tests that look inside COMMAND's.
type value struct {
	kind byte
	str  string
	n    int64
	arr  []value
}

// decode decodes the reply at the start of b (well-formed: it came from a
// ReplyReader) and returns it with its length.
func decode(b []byte) (value, int) {
	end := strings.Index(string(b), "\r\n")
	v := value{kind: b[0], str: string(b[1:end])}
	at := end + 2
	switch v.kind {
	case ':':
		v.n, _ = strconv.ParseInt(v.str, 10, 64)
	case '$':
		n, _ := strconv.Atoi(v.str)
		if n >= 0 {
			v.str = string(b[at : at+n])
			at += n + 2
		}
	case '*':
		n, _ := strconv.Atoi(v.str)
		for range max(n, 0) {
			e, m := decode(b[at:])
			v.arr = append(v.arr, e)
			at += m
		}
	}
	return v, at
}

func (v value) strings() []string {
	var s []string
	for _, e := range v.arr {
		s = append(s, e.str)
	}
	return s
}

// TestTableMatchesServer asks redis-server 7.0 for COMMAND and holds the
// table to it: the same commands, the same subcommands for the containers
// the table looks into, and for each the same arity, key range and
// movable keys. Commands the server flags admin must be refused by the
// proxy, and blocking and pub/sub ones refused or served as such.
func TestTableMatchesServer(t *testing.T) {
	c := startServer(t).dial(t)
	info, _ := decode(c.do("INFO", "server").Data)
	if !strings.Contains(info.str, "redis_version:7.0.") {
		t.Fatalf("the table is redis 7.0's; this redis-server says:\n%s", info.str)
	}
	all, _ := decode(c.do("COMMAND").Data)
	seen := map[string]bool{}
	for _, info := range all.arr {
		checkCommand(t, info, seen)
	}
	for i := range specs {
		if !seen[specs[i].name] {
			t.Errorf("%s is in the table but not in redis-server 7.0", specs[i].name)
		}
	}
}

// checkCommand compares one COMMAND entry, and its subcommands when the
// table looks into them, with the table.
func checkCommand(t *testing.T, info value, seen map[string]bool) {
	t.Helper()
	a := info.arr
	name := a[0].str
	seen[name] = true
	cmd := Lookup(name)
	if cmd == nil {
		t.Errorf("redis-server has %s, the table has not", name)
		return
	}
	flags := a[2].strings()
	if got, want := cmd.Arity(), int(a[1].n); got != want {
		t.Errorf("%s: arity %d, server says %d", name, got, want)
	}
	first, last, step := cmd.KeyRange()
	if first != int(a[3].n) || last != int(a[4].n) || step != int(a[5].n) {
		t.Errorf("%s: keys %d %d %d, server says %d %d %d", name, first, last, step, a[3].n, a[4].n, a[5].n)
	}
	if movable := slices.Contains(flags, "movablekeys"); cmd.Movable() != movable {
		t.Errorf("%s: movable %v, server says %v", name, cmd.Movable(), movable)
	}
	if ro := slices.Contains(flags, "readonly"); cmd.ReadOnly() != ro {
		t.Errorf("%s: read-only %v, server says %v", name, cmd.ReadOnly(), ro)
	}
	for _, f := range []string{"blocking", "pubsub", "admin"} {
		served := f == "pubsub" && cmd.Class() == ClassPubSub || f == "blocking" && cmd.Class() == ClassBlocking
		if slices.Contains(flags, f) && cmd.Class() != ClassRefused && !served {
			t.Errorf("%s: the server flags it %s, the proxy must refuse it (class %v)", name, f, cmd.Class())
		}
	}
	if cmd.subs == nil || len(a) < 10 {
		return
	}
	if len(a[9].arr) != len(cmd.subs) {
		t.Errorf("%s: %d subcommands, server has %d", name, len(cmd.subs), len(a[9].arr))
	}
	for _, sub := range a[9].arr {
		checkCommand(t, sub, seen)
	}
}

// keySamples are requests for the commands whose keys move, valid for the
// server; the other keyed commands are sampled from their arity.
var keySamples = [][]string{
	{"EVAL", "s", "2", "a", "b", "x"}, {"EVAL_RO", "s", "1", "a"}, {"EVALSHA", "s", "0", "x"},
	{"EVALSHA_RO", "s", "2", "a", "b"}, {"FCALL", "f", "1", "a", "x"}, {"FCALL_RO", "f", "2", "a", "b"},
	{"ZUNIONSTORE", "d", "2", "a", "b", "WEIGHTS", "1", "2"}, {"ZINTERSTORE", "d", "1", "a"},
	{"ZDIFFSTORE", "d", "3", "a", "b", "c"}, {"ZUNION", "2", "a", "b", "WITHSCORES"},
	{"ZINTER", "1", "a"}, {"ZDIFF", "2", "a", "b"}, {"ZINTERCARD", "2", "a", "b", "LIMIT", "1"},
	{"SINTERCARD", "2", "a", "b"}, {"SINTERCARD", "1", "a", "LIMIT", "2"},
	{"LMPOP", "2", "a", "b", "LEFT", "COUNT", "2"}, {"ZMPOP", "1", "a", "MIN"},
	{"SORT", "a"}, {"SORT", "a", "BY", "w_*", "GET", "#", "STORE", "d"},
	{"SORT", "a", "LIMIT", "0", "1", "STORE", "d"}, {"SORT", "a", "STORE", "d", "STORE", "e"},
	{"SORT", "a", "GET", "store", "ALPHA"}, {"SORT", "a", "LIMIT", "store", "x", "DESC"},
	{"SORT_RO", "a", "BY", "w_*"}, {"SORT_RO", "a", "GET", "#"},
	{"GEORADIUS", "k", "0", "0", "1", "m"}, {"GEORADIUS", "k", "0", "0", "1", "m", "STORE", "d"},
	{"GEORADIUS", "k", "0", "0", "1", "m", "STOREDIST", "d"},
	{"GEORADIUS", "k", "0", "0", "1", "m", "STORE", "d", "STOREDIST", "e"},
	{"GEORADIUSBYMEMBER", "k", "m", "1", "km", "STORE", "d"}, {"GEORADIUSBYMEMBER", "k", "m", "1", "km"},
	{"GEORADIUSBYMEMBER", "k", "m", "1", "km", "COUNT", "2", "STOREDIST", "d"},
	{"BLMPOP", "0", "2", "a", "b", "LEFT"}, {"BZMPOP", "1.5", "1", "a", "MIN", "COUNT", "2"},
	{"XREAD", "STREAMS", "a", "0"}, {"XREAD", "COUNT", "2", "BLOCK", "0", "STREAMS", "a", "b", "0", "$"},
	{"XREADGROUP", "GROUP", "g", "c", "NOACK", "STREAMS", "a", "b", "0", ">"},
	{"XREADGROUP", "GROUP", "g", "c", "BLOCK", "10", "COUNT", "1", "STREAMS", "a", ">"},
}

// TestKeysMatchServer asks redis-server's COMMAND GETKEYS for the keys of
// a request of every keyed command the proxy routes, and compares them
// with the Reader's.
func TestKeysMatchServer(t *testing.T) {
	c := startServer(t).dial(t)
	samples := keySamples
	for i := range specs {
		s := &specs[i]
		cmd := Lookup(s.name)
		if cmd.Movable() || (cmd.class != ClassSingle && cmd.class != ClassSplit && cmd.class != ClassSameServer && cmd.class != ClassBlocking) {
			continue
		}
		base := strings.Split(s.name, "|")
		n := max(s.arity, -s.arity)
		for _, extra := range []int{0, 2} {
			if extra > 0 && s.arity > 0 {
				break
			}
			args := slices.Clone(base)
			for j := len(base); j < n+extra; j++ {
				args = append(args, "a"+strconv.Itoa(j))
			}
			samples = append(samples, args)
		}
	}
	for _, args := range samples {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			want := serverKeys(c, args)
			b := make([][]byte, len(args))
			for i, a := range args {
				b[i] = []byte(a)
			}
			req, err := readOne(t, string(AppendArgs(nil, b)), Limits{})
			if err != nil {
				t.Fatalf("the reader refuses what the server takes: %v", err)
			}
			var got []string
			for i := range req.NumKeys() {
				got = append(got, string(req.Key(i)))
			}
			if !slices.Equal(got, want) {
				t.Errorf("keys %q, server says %q", got, want)
			}
		})
	}
}

// serverKeys returns COMMAND GETKEYS's answer. The server refuses a
// request whose second key spec finds nothing ("PFMERGE dest", valid as a
// command); the keys are then those of the legacy range, which
// TestTableMatchesServer holds to COMMAND INFO's.
func serverKeys(c *conn, args []string) []string {
	v, _ := decode(c.do(append([]string{"COMMAND", "GETKEYS"}, args...)...).Data)
	if v.kind == '*' {
		return v.strings()
	}
	first, last, step := Lookup(args[0]).KeyRange()
	if last < 0 {
		last += len(args)
	}
	var keys []string
	for i := first; i <= last && i > 0; i += step {
		keys = append(keys, args[i])
	}
	return keys
}
