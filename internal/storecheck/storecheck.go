// Package storecheck runs concurrent Redis clients against a key-value
// store - a kolco proxy's Redis pool, nutcracker, a server - records the
// history of what each asked and was answered, and checks that history
// for linearizability with porcupine, against a model of the commands it
// sends: SET, GET, INCR, APPEND, DEL and EXPIRE, and transactions
// (MULTI ... EXEC) on the keys of one hash tag. It is what the tests of
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
	// Tx, when set, is the percentage of requests that are transactions
	// (see Input.Tx) on the keys of Groups hash-tag groups, which the
	// single-key requests use as well as the Keys. Without it no request
	// is a transaction and no key has a hash tag.
	Tx int
	// Groups is how many hash-tag groups of groupSize keys there are
	// when Tx is set. Default 8.
	Groups int
}

// groupSize is how many keys a hash-tag group has: a transaction uses two
// or three of them.
const groupSize = 3

// Input is one request of the history.
type Input struct {
	Op  string // SET, GET, INCR, APPEND, DEL, EXPIRE, or EXEC: a transaction
	Key string // for EXEC, the key of Tx's first command
	Arg string // SET's value, APPEND's suffix
	// Tx is EXEC's transaction: its commands, SET, GET, INCR and APPEND
	// on keys of one hash tag, sent between MULTI and EXEC.
	Tx []Input
}

// Output is its reply. Unknown marks a request whose outcome the client
// never learned (its connection failed or timed out): it may have taken
// effect, once, at any time after it was sent.
type Output struct {
	Unknown bool
	Err     bool     // an error reply
	Nil     bool     // GET of no key
	Val     string   // GET's value
	N       int64    // the integer reply of INCR, APPEND, DEL, EXPIRE
	Tx      []Output // EXEC's reply: each command's in turn
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
	// the history, see notSent; or a transaction discarded before its
	// EXEC ran), unknown.
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
	switch {
	case cfg.Tx == 0:
		cfg.Groups = 0
	case cfg.Groups == 0:
		cfg.Groups = 8
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

// Progress returns how many requests have been answered so far, while
// the workload runs.
func (r *Run) Progress() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.Answered
}

// Key returns the i-th key of the workload: the Keys first, then the
// keys of the hash-tag groups, {tN}a, {tN}b and so on after the Prefix.
func (r *Run) Key(i int) string {
	if i < r.cfg.Keys {
		return r.cfg.Prefix + strconv.Itoa(i)
	}
	i -= r.cfg.Keys
	return fmt.Sprintf("%s{t%d}%c", r.cfg.Prefix, i/groupSize, 'a'+i%groupSize)
}

// Keys returns every key of the workload.
func (r *Run) Keys() []string {
	keys := make([]string, r.keys())
	for i := range keys {
		keys[i] = r.Key(i)
	}
	return keys
}

// keys is how many keys the workload has.
func (r *Run) keys() int { return r.cfg.Keys + r.cfg.Groups*groupSize }

// now is the time since the run began, the history's clock.
func (r *Run) now() int64 { return int64(time.Since(r.start)) }

// never is the return time of a request whose outcome is unknown: after
// every other.
const never = int64(1 << 62)

func (r *Run) client(ctx context.Context, id int) {
	r.drive(ctx, id, func(rng *rand.Rand, c *conn) bool {
		in := r.next(rng)
		call := r.now()
		reply, elems, sent, err := c.request(in, id%2 == 0)
		return r.outcome(id, in, call, r.now(), reply, elems, sent, err)
	})
}

// drive runs client id's loop of requests, paced and bounded by the run's
// settings, over a connection dialed again after a break: step sends one
// request on c and reports whether c is broken.
func (r *Run) drive(ctx context.Context, id int, step func(rng *rand.Rand, c *conn) (broken bool)) {
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
		if step(rng, c) {
			c.close()
			c = nil
		}
	}
}

// outcome records what client id's request in, called at call, came to
// at ret: its reply, or err with whether the request (a transaction's
// EXEC) was sent at all. It reports whether the connection is broken.
func (r *Run) outcome(id int, in Input, call, ret int64, reply string, elems []string, sent bool, err error) (broken bool) {
	switch {
	case err != nil && !sent:
		// A transaction whose EXEC was not sent: discarded.
		r.note(fmt.Sprintf("%s %s: %v before EXEC", in.Op, in.Key, err))
		r.mu.Lock()
		r.Retried++
		r.mu.Unlock()
		return true
	case err != nil:
		r.note(fmt.Sprintf("%s %s: %v", in.Op, in.Key, err))
		r.record(porcupine.Operation{ClientId: id, Input: in, Call: call, Output: Output{Unknown: true}, Return: never}, &r.Unknown)
		return true
	case notSent(reply):
		r.mu.Lock()
		r.Retried++
		r.mu.Unlock()
		return false
	}
	out, ok := parse(in, reply)
	if in.Op == "EXEC" {
		out, ok = parseExec(in, reply, elems)
	}
	if !ok {
		r.note(fmt.Sprintf("%s %s: reply %q", in.Op, in.Key, reply))
		r.record(porcupine.Operation{ClientId: id, Input: in, Call: call, Output: Output{Unknown: true}, Return: never}, &r.Unknown)
		return false
	}
	r.record(porcupine.Operation{ClientId: id, Input: in, Call: call, Output: out, Return: ret}, &r.Answered)
	return false
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

// next picks a request: a transaction, Tx in a hundred, or a key and a
// command.
func (r *Run) next(rng *rand.Rand) Input {
	if r.cfg.Tx > 0 && rng.IntN(100) < r.cfg.Tx {
		return r.nextTx(rng)
	}
	key := r.Key(rng.IntN(r.keys()))
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
// nutcracker words it; -EXECABORT, a transaction discarded; or
// -NOREPLICAS, a write its server refused whole for want of replicas (a
// single command, a script or a transaction alike; a Redis pool keeps one
// copy of a key, so no other server took it). Left out of the history,
// such a request is not one of unknown outcome, which the checker must
// try at every point after it (a fault schedule's store history with
// 1,526 of them was not decided in 3 minutes).
func notSent(reply string) bool {
	return strings.HasPrefix(reply, "-TRYAGAIN") || reply == "-ERR Connection refused\r\n" || strings.HasPrefix(reply, "-EXECABORT") ||
		strings.HasPrefix(reply, "-NOREPLICAS")
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

// do sends in, a command but EXEC, and returns the reply, whole.
func (c *conn) do(in Input) (string, error) {
	if err := c.send(args(in)); err != nil {
		return "", err
	}
	reply, _, err := c.reply()
	return reply, err
}

// args are the arguments of in, a command but EXEC.
func args(in Input) []string {
	args := []string{in.Op, in.Key}
	switch in.Op {
	case "SET", "APPEND":
		args = append(args, in.Arg)
	case "EXPIRE":
		args = append(args, expireSeconds)
	}
	return args
}

// send writes the commands at once.
func (c *conn) send(cmds ...[]string) error {
	var b strings.Builder
	for _, args := range cmds {
		fmt.Fprintf(&b, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
	}
	if err := c.c.SetDeadline(time.Now().Add(c.timeout)); err != nil {
		return err
	}
	_, err := c.c.Write([]byte(b.String()))
	return err
}

// reply reads one reply, whole; an array's elements are returned apart
// as well.
func (c *conn) reply() (string, []string, error) {
	line, err := c.r.ReadString('\n')
	if err != nil {
		return "", nil, err
	}
	if line == "$-1\r\n" || line == "*-1\r\n" || !strings.HasPrefix(line, "$") && !strings.HasPrefix(line, "*") {
		return line, nil, nil
	}
	n, err := strconv.Atoi(strings.TrimSuffix(line[1:], "\r\n"))
	if err != nil || n < 0 {
		return "", nil, fmt.Errorf("bad reply %q", line)
	}
	if line[0] == '*' {
		var elems []string
		for range n {
			e, _, err := c.reply()
			if err != nil {
				return "", nil, err
			}
			line += e
			elems = append(elems, e)
		}
		return line, elems, nil
	}
	data := make([]byte, n+2)
	if _, err := readFull(c.r, data); err != nil {
		return "", nil, err
	}
	return line + string(data), nil, nil
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
