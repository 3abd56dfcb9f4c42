//go:build unix

package proxy

import (
	"fmt"
	"testing"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// BenchmarkHotKeyGet: a get of one key through an in-process proxy, one
// client connection, with the hot-key cache off (the real memcached
// answers) and on (the proxy answers from its cache, the key being the
// hottest), side by side; cpu-ns/op is the process's CPU time per get,
// the test's client included (see BenchmarkSampleRequest):
//
//	go test -run '^$' -bench HotKeyGet -count 5 ./proxy
func BenchmarkHotKeyGet(b *testing.B) {
	m := startMemcached(b, 0)
	for _, cache := range []string{"off", "on"} {
		b.Run("cache="+cache, func(b *testing.B) {
			s := startProxy(b, poolYAML(fmt.Sprintf("  traffic: {enabled: true}\n  hot_keys: {enabled: %v, staleness: 60000}\n", cache == "on"), m))
			c := dial(b, s.Addr("p").String())
			c.do("set hot 0 0 100\r\n" + string(make([]byte, 100)) + "\r\n")
			if p := s.testPool("p"); p.hot != nil {
				eventually(b, "the cache to answer the hot key", func() bool {
					c.do("get hot\r\n")
					return p.hot.hits.Load() > 0
				})
			}
			b.ReportAllocs()
			req := []byte("get hot\r\n")
			var buf []byte
			cpu := processCPU()
			for b.Loop() {
				if _, err := c.conn.Write(req); err != nil {
					b.Fatal(err)
				}
				var err error
				if buf, _, err = c.rr.Read(buf[:0], memcache.CmdGet, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
