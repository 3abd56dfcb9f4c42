// Package storecheck runs concurrent Redis clients against a key-value
// store - a kolco proxy's Redis pool, nutcracker, a server - records the
// history of what each asked and was answered, and checks that history
// for linearizability with porcupine, against a model of the commands it
// sends: SET, GET, INCR, APPEND, DEL and EXPIRE. It is what the tests of
// the proxy's store moves show "nothing lost" with.
package storecheck

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// Config is a run's workload.
type Config struct {
	// Addrs are the addresses the clients connect to, spread over them.
	Addrs []string
	// Clients is how many clients run at once. Default 8.
	Clients int
	// Keys is how many keys they share. Default 64.
	Keys int
	// Prefix starts every key. Default "lin:".
	Prefix string
	// Seed makes the run's choices repeatable.
	Seed uint64
	// Timeout bounds each request. Default 5 s.
	Timeout time.Duration
	// Pace, when set, is the least time between the starts of one
	// client's requests: a run beside other work, or one whose history
	// must stay small enough to check, sends at most 1/Pace a second per
	// client.
	Pace time.Duration
	// Limit, when set, is how many requests each client sends at most.
	Limit int
}

// Input is one request of the history.
type Input struct {
	Op  string // SET, GET, INCR, APPEND, DEL or EXPIRE
	Key string
	Arg string // SET's value, APPEND's suffix
}

// Output is its reply. Unknown marks a request whose outcome the client
// never learned (its connection failed or timed out): it may have taken
// effect, once, at any time after it was sent.
type Output struct {
	Unknown bool
	Err     bool   // an error reply
	Nil     bool   // GET of no key
	Val     string // GET's value
	N       int64  // the integer reply of INCR, APPEND, DEL, EXPIRE
}

// Run is a workload running.
type Run struct {
	cfg    Config
	start  time.Time
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu  sync.Mutex
	ops []porcupine.Operation
	// Counts of requests by outcome: answered, refused before the proxy
	// sent them on (-TRYAGAIN, or no server to send them to: left out of
	// the history, see notSent), unknown.
	Answered, Retried, Unknown int
	// Errors holds the first error replies and failures, for a report.
	Errors []string
}

// Start starts the workload; Stop ends it.
func Start(cfg Config) *Run {
	if cfg.Clients == 0 {
		cfg.Clients = 8
	}
	if cfg.Keys == 0 {
		cfg.Keys = 64
	}
	if cfg.Prefix == "" {
		cfg.Prefix = "lin:"
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Run{cfg: cfg, start: time.Now(), cancel: cancel}
	for id := range cfg.Clients {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.client(ctx, id)
		}()
	}
	return r
}

// Stop ends the workload once every client's request in flight is done,
// and returns the history.
func (r *Run) Stop() []porcupine.Operation {
	r.cancel()
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ops
}

// Wait waits for every client to send its Limit of requests, and returns
// the history; without a Limit it waits until Stop.
func (r *Run) Wait() []porcupine.Operation {
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ops
}

// Key returns the i-th key of the workload.
func (r *Run) Key(i int) string { return r.cfg.Prefix + strconv.Itoa(i) }

// now is the time since the run began, the history's clock.
func (r *Run) now() int64 { return int64(time.Since(r.start)) }

// never is the return time of a request whose outcome is unknown: after
// every other.
const never = int64(1 << 62)

func (r *Run) client(ctx context.Context, id int) {
	rng := rand.New(rand.NewPCG(r.cfg.Seed, uint64(id)))
	var c *conn
	defer func() {
		if c != nil {
			c.close()
		}
	}()
	var pace <-chan time.Time
	if r.cfg.Pace > 0 {
		t := time.NewTicker(r.cfg.Pace)
		defer t.Stop()
		pace = t.C
	}
	for sent := 0; ctx.Err() == nil && (r.cfg.Limit == 0 || sent < r.cfg.Limit); sent++ {
		if pace != nil {
			select {
			case <-pace:
			case <-ctx.Done():
				return
			}
		}
		if c == nil {
			var err error
			if c, err = dial(r.cfg.Addrs[id%len(r.cfg.Addrs)], r.cfg.Timeout); err != nil {
				r.note("dial: " + err.Error())
				time.Sleep(50 * time.Millisecond)
				continue
			}
		}
		in := r.next(rng)
		call := r.now()
		reply, err := c.do(in)
		ret := r.now()
		switch {
		case err != nil:
			c.close()
			c = nil
			r.note(fmt.Sprintf("%s %s: %v", in.Op, in.Key, err))
			r.record(porcupine.Operation{ClientId: id, Input: in, Call: call, Output: Output{Unknown: true}, Return: never}, &r.Unknown)
		case notSent(reply):
			r.mu.Lock()
			r.Retried++
			r.mu.Unlock()
		default:
			out, ok := parse(in, reply)
			if !ok {
				r.note(fmt.Sprintf("%s %s: reply %q", in.Op, in.Key, reply))
				r.record(porcupine.Operation{ClientId: id, Input: in, Call: call, Output: Output{Unknown: true}, Return: never}, &r.Unknown)
				continue
			}
			r.record(porcupine.Operation{ClientId: id, Input: in, Call: call, Output: out, Return: ret}, &r.Answered)
		}
	}
}

func (r *Run) record(op porcupine.Operation, count *int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops = append(r.ops, op)
	*count++
}

func (r *Run) note(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.Errors) < 20 {
		r.Errors = append(r.Errors, s)
	}
}

// next picks a request: a key, mostly the first ones, and a command.
func (r *Run) next(rng *rand.Rand) Input {
	key := r.Key(rng.IntN(r.cfg.Keys))
	switch n := rng.IntN(100); {
	case n < 30:
		return Input{Op: "GET", Key: key}
	case n < 50:
		return Input{Op: "SET", Key: key, Arg: strconv.Itoa(rng.IntN(1000))}
	case n < 70:
		return Input{Op: "INCR", Key: key}
	case n < 85:
		return Input{Op: "APPEND", Key: key, Arg: strconv.Itoa(1 + rng.IntN(9))}
	case n < 93:
		return Input{Op: "DEL", Key: key}
	default:
		return Input{Op: "EXPIRE", Key: key}
	}
}

// expireSeconds is the time to live EXPIRE sets: far past any run, so
// that no key of the model expires.
const expireSeconds = "100000"

// parse reads a reply to in.
func parse(in Input, reply string) (Output, bool) {
	if strings.HasPrefix(reply, "-") {
		// INCR is the only command here with an error of its own: of a
		// value that is not an integer, or at the integers' end. Any
		// other error - a server down, a timeout - leaves the outcome
		// unknown: the proxy may have sent the command on.
		return Output{Err: true}, in.Op == "INCR" && incrError(reply)
	}
	switch in.Op {
	case "SET":
		return Output{}, reply == "+OK\r\n"
	case "GET":
		if reply == "$-1\r\n" {
			return Output{Nil: true}, true
		}
		head, val, ok := strings.Cut(reply, "\r\n")
		if !ok || !strings.HasPrefix(head, "$") {
			return Output{}, false
		}
		return Output{Val: strings.TrimSuffix(val, "\r\n")}, true
	default:
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(reply, ":"), "\r\n"), 10, 64)
		return Output{N: n}, err == nil && strings.HasPrefix(reply, ":")
	}
}

// notSent reports whether reply says that the proxy did not send the
// request on, so that it took no effect: -TRYAGAIN (a key moving), or
// "Connection refused", which a kolco proxy answers only when it could
// not connect to the key's server or the server is marked down, as
// nutcracker words it. Left out of the history, such a request is not one
// of unknown outcome, which the checker must try at every point after it
// (a fault schedule's store history with 1,526 of them was not decided in
// 3 minutes).
func notSent(reply string) bool {
	return strings.HasPrefix(reply, "-TRYAGAIN") || reply == "-ERR Connection refused\r\n"
}

// incrError reports whether reply is Redis's own error for an INCR: the
// value is not an integer, or would overflow.
func incrError(reply string) bool {
	return strings.HasPrefix(reply, "-ERR value is not an integer or out of range") ||
		strings.HasPrefix(reply, "-ERR increment or decrement would overflow")
}

// conn is one client's connection.
type conn struct {
	c       net.Conn
	r       *bufio.Reader
	timeout time.Duration
}

func dial(addr string, timeout time.Duration) (*conn, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	return &conn{c: c, r: bufio.NewReader(c), timeout: timeout}, nil
}

func (c *conn) close() { c.c.Close() }

// do sends in and returns the reply, whole.
func (c *conn) do(in Input) (string, error) {
	args := []string{in.Op, in.Key}
	switch in.Op {
	case "SET", "APPEND":
		args = append(args, in.Arg)
	case "EXPIRE":
		args = append(args, expireSeconds)
	}
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
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(line, "$") || line == "$-1\r\n" {
		return line, nil
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

func readFull(r *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// state is one key's value in the model.
type state struct {
	exists bool
	val    string
}

// Model is the commands' model, a key at a time: a request whose outcome
// is unknown took effect or did not.
var Model = porcupine.NondeterministicModel{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range history {
			if noEffect(op) {
				continue
			}
			k := op.Input.(Input).Key
			if byKey[k] == nil {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, byKey[k])
		}
		return out
	},
	Init: func() []interface{} { return []interface{}{state{}} },
	Step: func(st, in, out interface{}) []interface{} {
		s, i, o := st.(state), in.(Input), out.(Output)
		next, want := apply(s, i)
		if o.Unknown {
			return []interface{}{s, next}
		}
		if o == want {
			return []interface{}{next}
		}
		return nil
	},
	DescribeOperation: func(in, out interface{}) string {
		i, o := in.(Input), out.(Output)
		return fmt.Sprintf("%s %s %s -> %+v", i.Op, i.Key, i.Arg, o)
	},
}

// noEffect reports whether op leaves every state as it is whether or not
// it took effect, and says nothing of it: a GET or an EXPIRE (whose time
// to live no run outlives) of unknown outcome. Left out of a key's
// history, it is one request fewer that may take effect at any time for
// the checker to place.
func noEffect(op porcupine.Operation) bool {
	in, out := op.Input.(Input), op.Output.(Output)
	return out.Unknown && (in.Op == "GET" || in.Op == "EXPIRE")
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
// description of a failure names the key.
func Check(history []porcupine.Operation, timeout time.Duration) (porcupine.CheckResult, string) {
	res, info := porcupine.CheckOperationsVerbose(Model.ToModel(), history, timeout)
	if res != porcupine.Illegal {
		return res, ""
	}
	var b strings.Builder
	for _, part := range info.PartialLinearizationsOperations() {
		for _, lin := range part {
			if len(lin) > 0 {
				fmt.Fprintf(&b, "a partial linearization of %d operations on %s\n", len(lin), lin[0].Input.(Input).Key)
				break
			}
		}
	}
	return res, b.String()
}
