package mover

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/proxy/redis"
)

// BenchmarkMove moves b.N keys of 100 bytes from one redis-server to
// another, side by side: "bare" is the loop an operator would write (SCAN
// a batch, MIGRATE ... KEYS it, on one connection, one after the other),
// at batches of 100 and 1000; "mover" is Run with every key moving and
// nothing holding it back. An op is one key moved; keys/s is the figure
// to compare.
//
//	go test -run '^$' -bench Move -benchtime 200000x ./proxy/internal/mover
func BenchmarkMove(b *testing.B) {
	for _, batch := range []int{100, 1000} {
		b.Run(fmt.Sprintf("bare/batch=%d", batch), func(b *testing.B) {
			benchMove(b, func(src, dst string) error { return bareLoop(src, dst, batch) })
		})
	}
	for _, v := range []struct {
		name string
		cfg  Config
	}{
		{"mover", Config{}},
		// The proxy's: each batch's MIGRATE in the script that sizes its
		// keys first (see big.go).
		{"mover/big-bounds", Config{BigElements: 1000, BigBytes: 1 << 20}},
		// The designs tried beside the defaults: one MIGRATE at a time,
		// more at once, longer slices (bigger batches), and bigger
		// batches still.
		{"mover/conns=1", Config{Conns: 1}},
		{"mover/conns=8", Config{Conns: 8}},
		{"mover/slice=4ms", Config{Slice: 4 * time.Millisecond}},
		{"mover/slice=4ms,max=4000", Config{Slice: 4 * time.Millisecond, MaxBatch: 4000}},
	} {
		b.Run(v.name, func(b *testing.B) {
			benchMove(b, func(src, dst string) error {
				return Run(context.Background(), dialer(src), &plan{dest: func([]byte) string { return dst }}, v.cfg)
			})
		})
	}
}

// benchMove fills a server with b.N keys, times move from it to another,
// and checks every key arrived.
func benchMove(b *testing.B, move func(src, dst string) error) {
	src, dst := startRedis(b), startRedis(b)
	value := strings.Repeat("v", 100)
	dial(b, src).pipeline(b.N, func(i int) []string { return []string{"SET", "key:" + strconv.Itoa(i), value} })
	b.ResetTimer()
	if err := move(src, dst); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "keys/s")
	if got := dial(b, dst).dbsize(); got != b.N {
		b.Fatalf("the target holds %d keys, want %d", got, b.N)
	}
}

// bareLoop is SCAN and MIGRATE ... KEYS from src to dst, one after the
// other on one connection, batch keys at a time.
func bareLoop(src, dst string, batch int) error {
	c, err := net.Dial("tcp", src)
	if err != nil {
		return err
	}
	defer c.Close()
	rr := redis.NewReplyReader(c, redis.ReplyLimits{})
	host, port, _ := net.SplitHostPort(dst)
	do := func(args ...[]byte) ([]byte, error) {
		if _, err := c.Write(redis.AppendArgs(nil, args)); err != nil {
			return nil, err
		}
		reply, _, err := rr.Read(nil, nil)
		if err == nil && redis.IsError(reply) {
			err = fmt.Errorf("%s", reply)
		}
		return reply, err
	}
	cursor := []byte("0")
	for {
		reply, err := do([]byte("SCAN"), cursor, []byte("COUNT"), []byte(strconv.Itoa(batch)))
		if err != nil {
			return err
		}
		next, keys, err := redis.ParseScan(reply)
		if err != nil {
			return err
		}
		if len(keys) > 0 {
			args := [][]byte{[]byte("MIGRATE"), []byte(host), []byte(port), nil, []byte("0"), []byte("5000"), []byte("REPLACE"), []byte("KEYS")}
			if _, err := do(append(args, keys...)...); err != nil {
				return err
			}
		}
		if string(next) == "0" {
			return nil
		}
		cursor = next
	}
}
