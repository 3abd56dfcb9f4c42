package storecheck

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// A workload of HSET and HGET on fields of a few hashes - big keys, in
// the tests of a store's move, that move piece by piece - beside the
// one of Start, with its own model: each field of each hash is a register
// of its own.

// HashConfig is a hash workload.
type HashConfig struct {
	// Addrs, Clients (default 4), Seed, Timeout (default 5 s), Pace and
	// Limit are as in Config.
	Addrs   []string
	Clients int
	Seed    uint64
	Timeout time.Duration
	Pace    time.Duration
	Limit   int
	// Hashes are the keys, Fields (default 16) how many fields of each
	// the clients set and read: "lin:0", "lin:1", ..., which the hashes
	// must not hold before.
	Hashes []string
	Fields int
}

// HashInput is one request of a hash workload's history.
type HashInput struct {
	Op    string // HSET or HGET
	Key   string
	Field string
	Value string // HSET's
}

// StartHash starts a hash workload; Stop ends it, and CheckHash checks
// its history.
func StartHash(cfg HashConfig) *Run {
	if cfg.Clients == 0 {
		cfg.Clients = 4
	}
	if cfg.Fields == 0 {
		cfg.Fields = 16
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Run{cfg: Config{Addrs: cfg.Addrs, Seed: cfg.Seed, Timeout: cfg.Timeout, Pace: cfg.Pace, Limit: cfg.Limit}, start: time.Now(), cancel: cancel}
	for id := range cfg.Clients {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.hashClient(ctx, id, cfg)
		}()
	}
	return r
}

// hashClient is client id of a hash workload.
func (r *Run) hashClient(ctx context.Context, id int, cfg HashConfig) {
	r.drive(ctx, id, func(rng *rand.Rand, c *conn) bool {
		in := HashInput{Op: "HGET", Key: cfg.Hashes[rng.IntN(len(cfg.Hashes))], Field: "lin:" + strconv.Itoa(rng.IntN(cfg.Fields))}
		args := []string{in.Op, in.Key, in.Field}
		if rng.IntN(2) == 0 {
			in.Op, in.Value = "HSET", strconv.Itoa(rng.IntN(1000))
			args = []string{in.Op, in.Key, in.Field, in.Value}
		}
		call := r.now()
		reply, err := c.doArgs(args)
		ret := r.now()
		switch {
		case err != nil:
			r.note(fmt.Sprintf("%s %s %s: %v", in.Op, in.Key, in.Field, err))
			r.record(porcupine.Operation{ClientId: id, Input: in, Call: call, Output: Output{Unknown: true}, Return: never}, &r.Unknown)
			return true
		case notSent(reply):
			r.mu.Lock()
			r.Retried++
			r.mu.Unlock()
			return false
		}
		out, ok := parseHash(in, reply)
		if !ok {
			r.note(fmt.Sprintf("%s %s %s: reply %q", in.Op, in.Key, in.Field, reply))
			r.record(porcupine.Operation{ClientId: id, Input: in, Call: call, Output: Output{Unknown: true}, Return: never}, &r.Unknown)
			return false
		}
		r.record(porcupine.Operation{ClientId: id, Input: in, Call: call, Output: out, Return: ret}, &r.Answered)
		return false
	})
}

// doArgs sends a command and returns its reply, whole: a line, or a bulk
// string.
func (c *conn) doArgs(args []string) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if err := c.c.SetDeadline(time.Now().Add(c.timeout)); err != nil {
		return "", err
	}
	if _, err := c.c.Write([]byte(b.String())); err != nil {
		return "", err
	}
	line, err := c.r.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "$") || line == "$-1\r\n" {
		return line, err
	}
	n, err := strconv.Atoi(strings.TrimSuffix(line[1:], "\r\n"))
	if err != nil || n < 0 {
		return "", fmt.Errorf("bad reply %q", line)
	}
	data := make([]byte, n+2)
	if _, err := readFull(c.r, data); err != nil {
		return "", err
	}
	return line + string(data), nil
}

// parseHash reads a reply to in; an error reply leaves the outcome
// unknown (false).
func parseHash(in HashInput, reply string) (Output, bool) {
	switch {
	case strings.HasPrefix(reply, "-"):
		return Output{}, false
	case in.Op == "HSET":
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(reply, ":"), "\r\n"), 10, 64)
		return Output{N: n}, err == nil && strings.HasPrefix(reply, ":")
	case reply == "$-1\r\n":
		return Output{Nil: true}, true
	}
	head, val, ok := strings.Cut(reply, "\r\n")
	return Output{Val: strings.TrimSuffix(val, "\r\n")}, ok && strings.HasPrefix(head, "$")
}

// HashModel is the hash workload's model, a field at a time.
var HashModel = porcupine.NondeterministicModel{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byField := map[[2]string][]porcupine.Operation{}
		var order [][2]string
		for _, op := range history {
			in := op.Input.(HashInput)
			if op.Output.(Output).Unknown && in.Op == "HGET" {
				continue // says nothing, changes nothing
			}
			k := [2]string{in.Key, in.Field}
			if byField[k] == nil {
				order = append(order, k)
			}
			byField[k] = append(byField[k], op)
		}
		out := make([][]porcupine.Operation, 0, len(order))
		for _, k := range order {
			out = append(out, byField[k])
		}
		return out
	},
	Init: func() []interface{} { return []interface{}{state{}} },
	Step: func(st, in, out interface{}) []interface{} {
		s, i, o := st.(state), in.(HashInput), out.(Output)
		next, want := s, Output{}
		if i.Op == "HSET" {
			next = state{exists: true, val: i.Value}
			if !s.exists {
				want.N = 1
			}
		} else if !s.exists {
			want.Nil = true
		} else {
			want.Val = s.val
		}
		switch {
		case o.Unknown:
			return []interface{}{s, next}
		case equal(o, want):
			return []interface{}{next}
		}
		return nil
	},
	DescribeOperation: func(in, out interface{}) string {
		i, o := in.(HashInput), out.(Output)
		return fmt.Sprintf("%s %s %s %s -> %+v", i.Op, i.Key, i.Field, i.Value, o)
	},
}

// CheckHash checks a hash workload's history for linearizability, within
// timeout.
func CheckHash(history []porcupine.Operation, timeout time.Duration) porcupine.CheckResult {
	return porcupine.CheckOperationsTimeout(HashModel.ToModel(), history, timeout)
}
