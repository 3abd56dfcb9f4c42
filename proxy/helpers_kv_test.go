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
)

// kvConn is a test client of one protocol: set and get a key, every
// failure returned rather than fatal, since a failed write is one of the
// outcomes a stall test counts.
type kvConn interface {
	set(key, val string) error
	get(key string) (val string, found bool, err error)
	close()
}

// mcKV is a memcached text-protocol client.
type mcKV struct {
	c net.Conn
	r *bufio.Reader
}

func dialKV(proto, addr string) (kvConn, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return nil, err
	}
	if proto == "redis" {
		return &redisKV{c: c, r: bufio.NewReader(c)}, nil
	}
	return &mcKV{c: c, r: bufio.NewReader(c)}, nil
}

func (m *mcKV) close() { m.c.Close() }

func (m *mcKV) set(key, val string) error {
	_ = m.c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := fmt.Fprintf(m.c, "set %s 0 0 %d\r\n%s\r\n", key, len(val), val); err != nil {
		return err
	}
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
	_ = m.c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := fmt.Fprintf(m.c, "get %s\r\n", key); err != nil {
		return "", false, err
	}
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
	c net.Conn
	r *bufio.Reader
}

func (k *redisKV) close() { k.c.Close() }

func (k *redisKV) do(args ...string) (string, error) {
	_ = k.c.SetDeadline(time.Now().Add(5 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := k.c.Write([]byte(b.String())); err != nil {
		return "", err
	}
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
	reply, err := k.do("SET", key, val)
	if err == nil && reply != "+OK\r\n" {
		err = fmt.Errorf("SET %s: %q", key, reply)
	}
	return err
}

func (k *redisKV) get(key string) (string, bool, error) {
	reply, err := k.do("GET", key)
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

// fillKV writes keys through addr, key i with value(i). A write the proxy
// timed out on a busy machine (a stall test's timeout is short, to find a
// stall soon) is written again: the value is the same.
func fillKV(t *testing.T, proto, addr string, keys []string, value func(i int) string) {
	t.Helper()
	c, err := dialKV(proto, addr)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		for attempt := 1; ; attempt++ {
			err := c.set(k, value(i))
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
