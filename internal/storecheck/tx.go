package storecheck

import (
	"math/rand/v2"
	"strconv"
	"strings"
)

// Transactions. An EXEC request is MULTI, two to four commands on two or
// three keys of one hash-tag group, and EXEC; the clients of even number
// send them as one pipeline, the others a command at a time, reading each
// +QUEUED before the next, as a client without pipelining does. Its
// outcome is EXEC's: the commands' replies, or -EXECABORT (discarded, and
// left out as a refusal is, see notSent), or unknown when the connection
// failed once EXEC was sent; a connection that failed before that leaves
// the transaction discarded, as redis-server discards it.

// nextTx picks a transaction: a group, two or three of its keys, and a
// command on each, on the first of them again at times.
func (r *Run) nextTx(rng *rand.Rand) Input {
	first := r.cfg.Keys + rng.IntN(r.cfg.Groups)*groupSize
	keys := rng.Perm(groupSize)[:2+rng.IntN(groupSize-1)]
	tx := make([]Input, len(keys)+rng.IntN(2))
	for i := range tx {
		key := r.Key(first + keys[i%len(keys)])
		switch rng.IntN(4) {
		case 0:
			tx[i] = Input{Op: "GET", Key: key}
		case 1:
			tx[i] = Input{Op: "SET", Key: key, Arg: strconv.Itoa(rng.IntN(1000))}
		case 2:
			tx[i] = Input{Op: "INCR", Key: key}
		default:
			tx[i] = Input{Op: "APPEND", Key: key, Arg: strconv.Itoa(1 + rng.IntN(9))}
		}
	}
	return Input{Op: "EXEC", Key: tx[0].Key, Tx: tx}
}

// request sends in and returns its reply, whole, and an array's elements
// apart; sent reports whether the request may have taken effect when err
// is not nil: false for a transaction whose EXEC was not sent.
func (c *conn) request(in Input, pipelined bool) (reply string, elems []string, sent bool, err error) {
	if in.Op != "EXEC" {
		reply, err = c.do(in)
		return reply, nil, true, err
	}
	cmds := [][]string{{"MULTI"}}
	for _, cmd := range in.Tx {
		cmds = append(cmds, args(cmd))
	}
	if pipelined {
		if err := c.send(append(cmds, []string{"EXEC"})...); err != nil {
			return "", nil, true, err
		}
		for range cmds {
			if _, _, err := c.reply(); err != nil {
				return "", nil, true, err
			}
		}
	} else {
		for _, cmd := range cmds {
			if err := c.send(cmd); err != nil {
				return "", nil, false, err
			}
			// A command refused while queued fails the transaction:
			// EXEC answers -EXECABORT.
			if _, _, err := c.reply(); err != nil {
				return "", nil, false, err
			}
		}
		if err := c.send([]string{"EXEC"}); err != nil {
			return "", nil, true, err
		}
	}
	reply, elems, err = c.reply()
	return reply, elems, true, err
}

// parseExec reads EXEC's reply to in: an array of each command's reply.
func parseExec(in Input, reply string, elems []string) (Output, bool) {
	if !strings.HasPrefix(reply, "*") || len(elems) != len(in.Tx) {
		return Output{}, false
	}
	outs := make([]Output, len(in.Tx))
	for i, cmd := range in.Tx {
		var ok bool
		if outs[i], ok = parse(cmd, elems[i]); !ok {
			return Output{}, false
		}
	}
	return Output{Tx: outs}, true
}
