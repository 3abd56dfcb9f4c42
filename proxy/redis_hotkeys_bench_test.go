//go:build unix

package proxy

import (
	"fmt"
	"io"
	"testing"
)

// BenchmarkHotKeyRedisGet: a GET of one key through an in-process proxy,
// one client connection, with the hot-key cache off (the real
// redis-server answers) and on (the proxy answers from its cache once the
// server's PING confirms the value), side by side; cpu-ns/op as in
// BenchmarkHotKeyGet:
//
//	go test -run '^$' -bench HotKeyRedisGet -count 5 ./proxy
func BenchmarkHotKeyRedisGet(b *testing.B) {
	r := startRedis(b, 0)
	for _, cache := range []string{"off", "on"} {
		b.Run("cache="+cache, func(b *testing.B) {
			s := startProxy(b, redisPoolYAML(fmt.Sprintf("  traffic: {enabled: true}\n  hot_keys: {enabled: %v}\n", cache == "on"), r))
			c := dialRedis(b, s.Addr("p").String())
			c.do("SET", "hot", "hello")
			if p := s.testPool("p"); p.hot != nil {
				eventually(b, "the cache to answer the hot key", func() bool {
					c.do("GET", "hot")
					return p.hot.hits.Load() > 0
				})
			}
			b.ReportAllocs()
			req, want := redisArgs([][]byte{[]byte("GET"), []byte("hot")}), "$5\r\nhello\r\n"
			buf := make([]byte, len(want))
			cpu := processCPU()
			for b.Loop() {
				if _, err := c.conn.Write(req); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(c.conn, buf); err != nil || string(buf) != want {
					b.Fatalf("%q %v", buf, err)
				}
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
