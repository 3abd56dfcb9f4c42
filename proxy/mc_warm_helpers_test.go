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

// cluster is real memcached servers, named m0, m1, ..., for tests of
// changes: a test configures a pool over some of them and reloads it over
// others.
type cluster struct {
	t  *testing.T
	ms []*memcached
}

func startCluster(t *testing.T, n int) *cluster {
	c := &cluster{t: t}
	for range n {
		c.ms = append(c.ms, startMemcached(t, 0))
	}
	return c
}

// lines returns the server lines of the servers with the indexes given.
func (c *cluster) lines(idx ...int) []string {
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = fmt.Sprintf("%s:1 m%d", c.ms[j].addr, j)
	}
	return out
}

// yaml returns a one-pool configuration over the servers idx.
func (c *cluster) yaml(extra string, idx ...int) string {
	return placementYAML("  timeout: 10000\n"+extra, c.lines(idx...))
}

// index returns the index of the server at addr.
func (c *cluster) index(addr string) int {
	for i, m := range c.ms {
		if m.addr == addr {
			return i
		}
	}
	c.t.Fatalf("no server at %s", addr)
	return -1
}

// direct is a connection straight to one memcached server.
type direct struct {
	t    testing.TB
	conn net.Conn
	r    *bufio.Reader
}

func dialDirect(t testing.TB, m *memcached) *direct {
	t.Helper()
	conn, err := net.DialTimeout(network(m.addr), m.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
	return &direct{t: t, conn: conn, r: bufio.NewReader(conn)}
}

// item is what a server holds of a key.
type item struct {
	value string
	flags uint32
	ttl   int64 // -1: no expiry
	cas   uint64
}

// get returns the server's item of key, and whether it holds one.
func (d *direct) get(key string) (item, bool) {
	d.t.Helper()
	fmt.Fprintf(d.conn, "mg %s t f v c\r\n", key)
	line, err := d.r.ReadString('\n')
	if err != nil {
		d.t.Fatal(err)
	}
	if line == "EN\r\n" {
		return item{}, false
	}
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "VA" {
		d.t.Fatalf("mg %s: %q", key, line)
	}
	n, _ := strconv.Atoi(f[1])
	var it item
	for _, tok := range f[2:] {
		v, _ := strconv.ParseInt(tok[1:], 10, 64)
		switch tok[0] {
		case 't':
			it.ttl = v
		case 'f':
			it.flags = uint32(v)
		case 'c':
			it.cas = uint64(v)
		}
	}
	data := make([]byte, n+2)
	if _, err := io.ReadFull(d.r, data); err != nil {
		d.t.Fatal(err)
	}
	it.value = string(data[:n])
	return it, true
}

// set stores key on the server with no expiry.
func (d *direct) set(key, value string) {
	d.t.Helper()
	fmt.Fprintf(d.conn, "set %s 0 0 %d\r\n%s\r\n", key, len(value), value)
	if line, err := d.r.ReadString('\n'); err != nil || line != "STORED\r\n" {
		d.t.Fatalf("set %s: %q, %v", key, line, err)
	}
}

// getValue reads key through a proxy client and returns its value, or ""
// for a miss.
func getValue(c *mc, key string) string {
	c.t.Helper()
	reply := c.do("get " + key + "\r\n")
	if reply == "END\r\n" {
		return ""
	}
	_, rest, ok := strings.Cut(reply, "\r\n")
	v, _, ok2 := strings.Cut(rest, "\r\n")
	if !ok || !ok2 {
		c.t.Fatalf("get %s: %q", key, reply)
	}
	return v
}

// setValue writes key through a proxy client.
func setValue(c *mc, key, value string, flags, exptime int) {
	c.t.Helper()
	if reply := c.do(fmt.Sprintf("set %s %d %d %d\r\n%s\r\n", key, flags, exptime, len(value), value)); reply != "STORED\r\n" {
		c.t.Fatalf("set %s: %q", key, reply)
	}
}

// flushAll empties the server.
func (d *direct) flushAll() {
	d.t.Helper()
	if _, err := io.WriteString(d.conn, "flush_all\r\n"); err != nil {
		d.t.Fatal(err)
	}
	if line, err := d.r.ReadString('\n'); err != nil || line != "OK\r\n" {
		d.t.Fatalf("flush_all: %q, %v", line, err)
	}
}
