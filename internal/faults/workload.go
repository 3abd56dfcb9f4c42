package faults

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kolco-dev/kolco/internal/resp"
)

// cacheLoad is the clients of a cache's run. Each proxy has clients and
// keys of its own: the proxies of a fleet each settle what they wrote to
// a server that was down, and nothing promises that one proxy reads what
// another wrote while their views of the servers differ (README,
// Failures), so that a key shared by two would find the fleet's documented
// limits, not the proxy's faults.
type cacheLoad struct {
	redis bool
	keys  int
	start time.Time
	ctx   context.Context
	stop  context.CancelFunc
	wg    sync.WaitGroup

	mu   sync.Mutex // guards what follows
	ops  []CacheOp
	errs map[string]int // error replies and failures, by text
	sent int
}

// Client timing: a client sends one request every clientPace at most,
// and gives up on one after clientTimeout (its outcome is then unknown).
const (
	clientPace    = 5 * time.Millisecond
	clientTimeout = 3 * time.Second
)

// startCacheLoad starts perProxy clients on each proxy address, each
// sending at most limit requests.
func startCacheLoad(redis bool, seed uint64, proxies []string, perProxy, keys, limit int) *cacheLoad {
	ctx, cancel := context.WithCancel(context.Background())
	l := &cacheLoad{redis: redis, keys: keys, start: time.Now(), ctx: ctx, stop: cancel, errs: map[string]int{}}
	for i, addr := range proxies {
		for j := range perProxy {
			id := i*perProxy + j
			l.wg.Add(1)
			go func() {
				defer l.wg.Done()
				l.client(id, i, addr, rand.New(rand.NewPCG(seed, uint64(id))), limit)
			}()
		}
	}
	return l
}

// key is the k-th key of proxy i.
func key(i, k int) string { return fmt.Sprintf("p%d:k%d", i, k) }

func (l *cacheLoad) now() time.Duration { return time.Since(l.start) }

// client sends requests to addr until the load stops or it has sent
// limit, on one connection at a time, a new one after a failure.
func (l *cacheLoad) client(id, proxy int, addr string, rng *rand.Rand, limit int) {
	tick := time.NewTicker(clientPace)
	defer tick.Stop()
	var c cacheConn
	conn := -1
	defer func() {
		if c != nil {
			c.close()
		}
	}()
	for seq := 0; seq < limit; seq++ {
		select {
		case <-tick.C:
		case <-l.ctx.Done():
			return
		}
		if c == nil {
			var err error
			if c, err = dialCache(l.redis, addr); err != nil {
				l.noteErr("connect: " + err.Error())
				continue
			}
			conn++
		}
		op := CacheOp{Client: id, Conn: conn, Key: key(proxy, rng.IntN(l.keys))}
		var more []string
		switch n := rng.IntN(100); {
		case n < 40:
			op.Kind, op.Value = Set, fmt.Sprintf("c%d.%d", id, seq)
		case n < 50:
			op.Kind = Delete
		case n < 85:
			op.Kind = Get
		default:
			op.Kind = Get
			more = []string{key(proxy, rng.IntN(l.keys)), key(proxy, rng.IntN(l.keys))}
		}
		if !l.do(c, op, more) {
			c.close()
			c = nil
		}
	}
}

// do sends op (a get of more keys too) and records its outcome; false
// when the connection failed.
func (l *cacheLoad) do(c cacheConn, op CacheOp, more []string) bool {
	op.Call = l.now()
	var err error
	switch op.Kind {
	case Set:
		op.Acked, err = c.set(op.Key, op.Value)
	case Delete:
		op.Acked, err = c.del(op.Key)
	case Get:
		keys := append([]string{op.Key}, more...)
		var vals []*string
		vals, err = c.get(keys)
		op.Return = l.now()
		if err == nil {
			for i, k := range keys {
				r := op
				r.Key = k
				if vals[i] != nil {
					r.Value, r.Found = *vals[i], true
				}
				l.record(r)
			}
		}
	}
	if op.Kind != Get {
		op.Return = l.now()
		l.record(op) // a write whose outcome is unknown too: it may take effect
	}
	var reply replyError
	if errors.As(err, &reply) {
		l.noteErr(string(reply))
		return true
	}
	if err != nil {
		l.noteErr(err.Error())
		return false
	}
	return true
}

func (l *cacheLoad) record(op CacheOp) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ops = append(l.ops, op)
}

// noteErr counts a failure by its text, addresses and numbers masked so
// that alike failures count together.
func (l *cacheLoad) noteErr(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs[maskNumbers(s)]++
}

// maskNumbers replaces each run of digits with "N".
func maskNumbers(s string) string {
	var b strings.Builder
	digits := false
	for _, r := range s {
		if r >= '0' && r <= '9' {
			if !digits {
				b.WriteByte('N')
			}
			digits = true
			continue
		}
		digits = false
		b.WriteRune(r)
	}
	return b.String()
}

// finish stops the clients, then reads every key once through its proxy,
// retrying a failed read for up to a few seconds (all retries within a
// minute), and returns the history.
func (l *cacheLoad) finish(proxies []string) []CacheOp {
	l.stop()
	l.wg.Wait()
	// Retries end a minute into the reads: a proxy that cannot serve one
	// key often serves none.
	all := time.Now().Add(time.Minute)
	for i, addr := range proxies {
		c, err := dialCache(l.redis, addr)
		if err != nil {
			l.noteErr("final reads: connect: " + err.Error())
			continue
		}
		for k := range l.keys {
			op := CacheOp{Client: -1 - i, Kind: Get, Key: key(i, k)}
			for attempt := 0; attempt < 20 && (attempt == 0 || time.Now().Before(all)); attempt++ {
				op.Call = l.now()
				vals, err := c.get([]string{op.Key})
				op.Return = l.now()
				if err == nil {
					if vals[0] != nil {
						op.Value, op.Found = *vals[0], true
					}
					l.record(op)
					break
				}
				if !errors.As(err, new(replyError)) {
					c.close()
					if c, err = dialCache(l.redis, addr); err != nil {
						break
					}
				}
				time.Sleep(200 * time.Millisecond) // a retry's pause, not ordering
			}
			if c == nil {
				break
			}
		}
		if c != nil {
			c.close()
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ops
}

// replyError is an error reply: the connection goes on.
type replyError string

func (e replyError) Error() string { return string(e) }

// cacheConn is a client's connection to a proxy.
type cacheConn interface {
	set(key, value string) (acked bool, err error)
	del(key string) (acked bool, err error)
	// get returns each key's value, nil for a miss.
	get(keys []string) ([]*string, error)
	close()
}

func dialCache(redis bool, addr string) (cacheConn, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return nil, err
	}
	if redis {
		return &redisConn{c: c, rc: resp.NewConn(c)}, nil
	}
	return &mcConn{c: c, r: bufio.NewReader(c)}, nil
}

// mcConn speaks memcached's text protocol.
type mcConn struct {
	c net.Conn
	r *bufio.Reader
}

func (m *mcConn) close() { m.c.Close() }

// line sends req and reads the reply's first line.
func (m *mcConn) line(req string) (string, error) {
	_ = m.c.SetDeadline(time.Now().Add(clientTimeout))
	if _, err := m.c.Write([]byte(req)); err != nil {
		return "", err
	}
	line, err := m.r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if strings.HasPrefix(line, "SERVER_ERROR") || strings.HasPrefix(line, "CLIENT_ERROR") || line == "ERROR" {
		return line, replyError(line)
	}
	return line, nil
}

func (m *mcConn) set(key, value string) (bool, error) {
	line, err := m.line(fmt.Sprintf("set %s 0 0 %d\r\n%s\r\n", key, len(value), value))
	if err != nil {
		return false, err
	}
	if line != "STORED" {
		return false, replyError("set: " + line)
	}
	return true, nil
}

func (m *mcConn) del(key string) (bool, error) {
	line, err := m.line("delete " + key + "\r\n")
	if err != nil {
		return false, err
	}
	if line != "DELETED" && line != "NOT_FOUND" {
		return false, replyError("delete: " + line)
	}
	return true, nil
}

func (m *mcConn) get(keys []string) ([]*string, error) {
	line, err := m.line("get " + strings.Join(keys, " ") + "\r\n")
	vals := make([]*string, len(keys))
	for ; err == nil && line != "END"; line, err = m.next() {
		f := strings.Fields(line)
		if len(f) != 4 || f[0] != "VALUE" {
			return nil, fmt.Errorf("get: reply %q", line)
		}
		n, cerr := strconv.Atoi(f[3])
		if cerr != nil || n < 0 || n > 1<<20 {
			return nil, fmt.Errorf("get: reply %q", line)
		}
		data := make([]byte, n+2)
		if _, err := io.ReadFull(m.r, data); err != nil {
			return nil, err
		}
		v := string(data[:n])
		for i, k := range keys {
			if k == f[1] && vals[i] == nil {
				vals[i] = &v
			}
		}
	}
	if err != nil {
		return nil, err
	}
	return vals, nil
}

// next reads the next line of a reply.
func (m *mcConn) next() (string, error) {
	line, err := m.r.ReadString('\n')
	return strings.TrimSuffix(line, "\r\n"), err
}

// redisConn speaks RESP2.
type redisConn struct {
	c  net.Conn
	rc *resp.Conn
}

func (r *redisConn) close() { r.c.Close() }

func (r *redisConn) do(args ...string) (resp.Value, error) {
	_ = r.rc.SetDeadline(time.Now().Add(clientTimeout))
	v, err := r.rc.Do(args...)
	var re resp.Error
	if errors.As(err, &re) {
		return v, replyError("-" + string(re))
	}
	return v, err
}

func (r *redisConn) set(key, value string) (bool, error) {
	v, err := r.do("SET", key, value)
	if err != nil {
		return false, err
	}
	if v.Str != "OK" {
		return false, replyError(fmt.Sprintf("SET: %+v", v))
	}
	return true, nil
}

func (r *redisConn) del(key string) (bool, error) {
	v, err := r.do("DEL", key)
	if err != nil {
		return false, err
	}
	return v.Kind == ':', nil
}

func (r *redisConn) get(keys []string) ([]*string, error) {
	if len(keys) == 1 {
		v, err := r.do("GET", keys[0])
		if err != nil {
			return nil, err
		}
		if v.Nil {
			return []*string{nil}, nil
		}
		return []*string{&v.Str}, nil
	}
	v, err := r.do(append([]string{"MGET"}, keys...)...)
	if err != nil {
		return nil, err
	}
	if len(v.Elems) != len(keys) {
		return nil, fmt.Errorf("MGET of %d keys: %d values", len(keys), len(v.Elems))
	}
	vals := make([]*string, len(keys))
	for i, e := range v.Elems {
		if !e.Nil {
			s := e.Str
			vals[i] = &s
		}
	}
	return vals, nil
}
