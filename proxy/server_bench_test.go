package proxy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// BenchmarkProxy measures request round trips through an in-process proxy
// to a real memcached, one client connection, no pipelining.
func BenchmarkProxy(b *testing.B) {
	m := startMemcached(b, 0)
	s := startProxy(b, poolYAML("", m))
	val := strings.Repeat("v", 100)
	var keys []string
	for i := range 10 {
		keys = append(keys, fmt.Sprint("bench:", i))
	}
	c := dial(b, s.Addr("p").String())
	for _, k := range keys {
		c.do(fmt.Sprintf("set %s 0 0 100\r\n%s\r\n", k, val))
	}
	for _, bc := range []struct {
		name, req string
		cmd       memcache.Command
	}{
		{"get", "get bench:3\r\n", memcache.CmdGet},
		{"set", "set bench:4 0 0 100\r\n" + val + "\r\n", memcache.CmdSet},
		{"get10", "get " + strings.Join(keys, " ") + "\r\n", memcache.CmdGet},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			req := []byte(bc.req)
			var buf []byte
			for b.Loop() {
				if _, err := c.conn.Write(req); err != nil {
					b.Fatal(err)
				}
				var err error
				if buf, _, err = c.rr.Read(buf[:0], bc.cmd, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
