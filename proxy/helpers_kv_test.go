package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
)

// kvConn is a test client of one protocol: set and get a key, every
// failure returned rather than fatal, since a failed write is one of the
// outcomes a stall test counts. A request's send and its reply's read are
// apart too, so that a test can send many before it reads their replies
// (setMany, getMany).
type kvConn interface {
	set(key, val string) error
	get(key string) (val string, found bool, err error)
	sendSet(key, val string) error
	readSet(key string) error
	sendGet(key string) error
	readGet(key string) (val string, found bool, err error)
	close()
}

// kvBatch is how many requests setMany and getMany send before they read
// the replies: a fiftieth of the round trips of one at a time.
const kvBatch = 50

// setMany sets every key to val(key), kvBatch requests sent at a time,
// and returns the first failure.
func setMany(c kvConn, keys []string, val func(string) string) error {
	for lo := 0; lo < len(keys); lo += kvBatch {
		batch := keys[lo:min(lo+kvBatch, len(keys))]
		for _, k := range batch {
			if err := c.sendSet(k, val(k)); err != nil {
				return err
			}
		}
		for _, k := range batch {
			if err := c.readSet(k); err != nil {
				return err
			}
		}
	}
	return nil
}

// getMany gets every key, kvBatch requests sent at a time, and calls got
// with each reply in the keys' order; it returns the first failure.
func getMany(c kvConn, keys []string, got func(key, val string, found bool)) error {
	for lo := 0; lo < len(keys); lo += kvBatch {
		batch := keys[lo:min(lo+kvBatch, len(keys))]
		for _, k := range batch {
			if err := c.sendGet(k); err != nil {
				return err
			}
		}
		for _, k := range batch {
			v, found, err := c.readGet(k)
			if err != nil {
				return err
			}
			got(k, v, found)
		}
	}
	return nil
}

// mcKV is a memcached text-protocol client.
type mcKV struct {
	c        net.Conn
	r        *bufio.Reader
	patience time.Duration // the bound on a batch's replies, from its last request sent
}

// kvPatience is a kv client's bound on the wait for a batch's replies: a
// guard against a reply that never comes, not a measure of how soon one
// does, so it scales with the load (at load 44-75 on two cores a batch of
// 50 gets through the proxy went unanswered for a fixed 5 s).
func kvPatience() time.Duration {
	return time.Duration(float64(5*time.Second) * realprog.Busy())
}

func dialKV(proto, addr string) (kvConn, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return nil, err
	}
	if proto == "redis" {
		return &redisKV{c: c, r: bufio.NewReader(c), patience: kvPatience()}, nil
	}
	return &mcKV{c: c, r: bufio.NewReader(c), patience: kvPatience()}, nil
}

func (m *mcKV) close() { m.c.Close() }

func (m *mcKV) set(key, val string) error {
	if err := m.sendSet(key, val); err != nil {
		return err
	}
	return m.readSet(key)
}

func (m *mcKV) sendSet(key, val string) error {
	_ = m.c.SetDeadline(time.Now().Add(m.patience))
	_, err := fmt.Fprintf(m.c, "set %s 0 0 %d\r\n%s\r\n", key, len(val), val)
	return err
}

func (m *mcKV) readSet(key string) error {
	line, err := m.r.ReadString('\n')
	if err != nil {
		return err
	}
	if line != "STORED\r\n" {
		return fmt.Errorf("set %s: %q", key, line)
	}
	return nil
}

func (m *mcKV) get(key string) (string, bool, error) {
	if err := m.sendGet(key); err != nil {
		return "", false, err
	}
	return m.readGet(key)
}

func (m *mcKV) sendGet(key string) error {
	_ = m.c.SetDeadline(time.Now().Add(m.patience))
	_, err := fmt.Fprintf(m.c, "get %s\r\n", key)
	return err
}

func (m *mcKV) readGet(key string) (string, bool, error) {
	line, err := m.r.ReadString('\n')
	if err != nil || line == "END\r\n" {
		return "", false, err
	}
	if !strings.HasPrefix(line, "VALUE ") {
		return "", false, fmt.Errorf("get %s: %q", key, line)
	}
	f := strings.Fields(line)
	n, _ := strconv.Atoi(f[3])
	buf := make([]byte, n+2)
	if _, err := io.ReadFull(m.r, buf); err != nil {
		return "", false, err
	}
	end, err := m.r.ReadString('\n')
	if err != nil || end != "END\r\n" {
		return "", false, fmt.Errorf("get %s: %q after the value", key, end)
	}
	return string(buf[:n]), true, nil
}

// redisKV is a RESP client.
type redisKV struct {
	c        net.Conn
	r        *bufio.Reader
	patience time.Duration // as mcKV's
}

func (k *redisKV) close() { k.c.Close() }

func (k *redisKV) do(args ...string) (string, error) {
	if err := k.send(args...); err != nil {
		return "", err
	}
	return k.read()
}

func (k *redisKV) send(args ...string) error {
	_ = k.c.SetDeadline(time.Now().Add(k.patience))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	_, err := k.c.Write([]byte(b.String()))
	return err
}

// read reads one reply: a line, or a bulk string whole.
func (k *redisKV) read() (string, error) {
	line, err := k.r.ReadString('\n')
	if err != nil {
		return "", err
	}
	if line[0] != '$' {
		return line, nil
	}
	n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
	if n < 0 {
		return line, nil
	}
	buf := make([]byte, n+2)
	if _, err := io.ReadFull(k.r, buf); err != nil {
		return "", err
	}
	return line + string(buf), nil
}

func (k *redisKV) set(key, val string) error {
	if err := k.sendSet(key, val); err != nil {
		return err
	}
	return k.readSet(key)
}

func (k *redisKV) sendSet(key, val string) error { return k.send("SET", key, val) }

func (k *redisKV) readSet(key string) error {
	reply, err := k.read()
	if err == nil && reply != "+OK\r\n" {
		err = fmt.Errorf("SET %s: %q", key, reply)
	}
	return err
}

func (k *redisKV) get(key string) (string, bool, error) {
	if err := k.sendGet(key); err != nil {
		return "", false, err
	}
	return k.readGet(key)
}

func (k *redisKV) sendGet(key string) error { return k.send("GET", key) }

func (k *redisKV) readGet(key string) (string, bool, error) {
	reply, err := k.read()
	switch {
	case err != nil:
		return "", false, err
	case reply == "$-1\r\n":
		return "", false, nil
	case reply[0] != '$':
		return "", false, fmt.Errorf("GET %s: %q", key, reply)
	}
	_, v, _ := strings.Cut(reply, "\r\n")
	return strings.TrimSuffix(v, "\r\n"), true, nil
}

// fillKV writes keys through addr, key i with value(i), kvBatch writes
// sent before their replies are read. A write the proxy timed out on a
// busy machine (a stall test's timeout is short, to find a stall soon) is
// written again, with the rest of its batch on a new connection: the
// values are the same.
func fillKV(t *testing.T, proto, addr string, keys []string, value func(i int) string) {
	t.Helper()
	c, err := dialKV(proto, addr)
	if err != nil {
		t.Fatal(err)
	}
	set := func(lo, hi int) error {
		for i := lo; i < hi; i++ {
			if err := c.sendSet(keys[i], value(i)); err != nil {
				return err
			}
		}
		for i := lo; i < hi; i++ {
			if err := c.readSet(keys[i]); err != nil {
				return err
			}
		}
		return nil
	}
	for lo := 0; lo < len(keys); lo += kvBatch {
		for attempt := 1; ; attempt++ {
			err := set(lo, min(lo+kvBatch, len(keys)))
			if err == nil {
				break
			}
			if attempt == 20 {
				t.Fatal(err)
			}
			c.close()
			if c, err = dialKV(proto, addr); err != nil {
				t.Fatal(err)
			}
		}
	}
	c.close()
}
