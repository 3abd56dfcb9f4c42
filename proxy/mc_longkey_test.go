package proxy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// TestLongKeyOnSetAsMemcached: a set of a 300-byte key is answered as the
// real memcached answers it, CLIENT_ERROR bad command line format, and the
// connection goes on. memcached then reads the value as a command (ERROR
// for "hello"); the proxy drops the value, so the set gets the one reply
// its client waits for. nutcracker closes the connection.
func TestLongKeyOnSetAsMemcached(t *testing.T) {
	t.Parallel()
	needBinary(t, "nutcracker")
	m := startMemcached(t, 0)
	ncListen := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startNutcracker(t, fmt.Sprintf("p:\n  listen: %s\n  servers:\n   - %s:1\n", ncListen, m.addr), ncListen)
	s := startProxy(t, poolYAML("", m))
	long := strings.Repeat("k", 300)
	set := "set " + long + " 0 0 5\r\nhello\r\n"

	mc := dial(t, m.addr)
	mc.send(set + "get a\r\n")
	memcachedFirst, _ := mc.r.ReadString('\n')
	memcachedThen, _ := mc.r.ReadString('\n')
	if memcachedFirst != "CLIENT_ERROR bad command line format\r\n" || memcachedThen != "ERROR\r\n" {
		t.Fatalf("memcached answers %q then %q: not what this test knows", memcachedFirst, memcachedThen)
	}

	k := dial(t, s.Addr("p").String())
	if got := k.do(set); got != memcachedFirst {
		t.Errorf("kolco: %q, memcached %q", got, memcachedFirst)
	}
	if got := k.do("set short 0 0 5\r\nhello\r\n"); got != "STORED\r\n" {
		t.Errorf("the next request on the connection: %q", got)
	}
	k.send("set " + long + " 0 0 5 noreply\r\nhello\r\nget short\r\n")
	if got := k.reply(memcache.CmdGet); got != "VALUE short 0 5\r\nhello\r\nEND\r\n" {
		t.Errorf("with noreply, nothing but the next request's reply: %q", got)
	}

	nc := dial(t, ncListen)
	nc.send(set)
	if b, err := nc.r.ReadByte(); err == nil {
		t.Errorf("nutcracker answered (%q...) where it closes the connection", b)
	}
}
