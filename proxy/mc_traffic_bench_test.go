//go:build unix

package proxy

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/proxy/memcache"
	"github.com/kolco-dev/kolco/sim/trace"
)

// The traffic sample's cost on the request path, side by side with the
// sample off: round trips of a get, a set and a 10-key get through an
// in-process proxy to a real memcached, one client connection. Besides
// ns/op, each reports cpu-ns/op, the process's CPU time (user and system,
// the test's client included) per request, which a busy machine does not
// inflate as it does the wall time:
//
//	go test -run '^$' -bench 'SampleRequest|SampleRecord' -count 5 ./proxy
func BenchmarkSampleRequest(b *testing.B) {
	m := startMemcached(b, 0)
	val := strings.Repeat("v", 100)
	var keys []string
	for i := range 10 {
		keys = append(keys, fmt.Sprint("bench:", i))
	}
	for _, bc := range []struct {
		name, req string
		cmd       memcache.Command
	}{
		{"get", "get bench:3\r\n", memcache.CmdGet},
		{"set", "set bench:4 0 0 100\r\n" + val + "\r\n", memcache.CmdSet},
		{"get10", "get " + strings.Join(keys, " ") + "\r\n", memcache.CmdGet},
	} {
		for _, sample := range []string{"off", "on"} {
			b.Run(bc.name+"/sample="+sample, func(b *testing.B) {
				s := startProxy(b, poolYAML(fmt.Sprintf("  traffic: {enabled: %v}\n", sample == "on"), m))
				c := dial(b, s.Addr("p").String())
				for _, k := range keys {
					c.do(fmt.Sprintf("set %s 0 0 100\r\n%s\r\n", k, val))
				}
				b.ReportAllocs()
				req := []byte(bc.req)
				var buf []byte
				cpu := processCPU()
				for b.Loop() {
					if _, err := c.conn.Write(req); err != nil {
						b.Fatal(err)
					}
					var err error
					if buf, _, err = c.rr.Read(buf[:0], bc.cmd, nil); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// BenchmarkSampleRecord measures recording a request of one key and of
// ten, to set beside a request's CPU time through the proxy
// (BenchmarkSampleRequest).
func BenchmarkSampleRecord(b *testing.B) {
	for _, share := range []float64{1, 0.01} {
		b.Run(fmt.Sprint("keys=10/key_share=", share), func(b *testing.B) {
			cfg := &PoolConfig{Listen: "127.0.0.1:0", Traffic: Traffic{Enabled: true, KeyShare: share}}
			s := newTrafficSample(cfg)
			notes := make([]trafficNote, 10)
			for i := range notes {
				notes[i] = trafficNote{key: fmt.Appendf(nil, "bench:%d", i), size: 100, result: trace.Hit}
			}
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				s.recordAll(time.Now().UnixNano(), "get", trace.Read, notes)
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
		b.Run(fmt.Sprint("keys=1/key_share=", share), func(b *testing.B) {
			cfg := &PoolConfig{Listen: "127.0.0.1:0", Traffic: Traffic{Enabled: true, KeyShare: share}}
			s := newTrafficSample(cfg)
			keys := make([][]byte, 10000)
			for i := range keys {
				keys[i] = fmt.Appendf(nil, "user:%d", i)
			}
			b.ReportAllocs()
			i := 0
			cpu := processCPU()
			for b.Loop() {
				s.record(time.Now().UnixNano(), keys[i%len(keys)], 100, "get", trace.Read, trace.Hit)
				i++
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
