package jumpback_test

import (
	"testing"

	"github.com/kolco-dev/kolco/jump"
	"github.com/kolco-dev/kolco/jumpback"
	"github.com/kolco-dev/kolco/kolcotest"
)

// TestBucket checks the promises of a consistent range hash (range,
// monotone growth across powers of two, where JumpBackHash changes its top
// interval, uniformity, the moved share): see kolcotest.RunBucket.
func TestBucket(t *testing.T) { kolcotest.RunBucket(t, jumpback.Bucket) }

func FuzzBucket(f *testing.F) {
	f.Add(uint64(0), 1)
	f.Add(uint64(1), 0)
	f.Add(^uint64(0), 1<<31)
	f.Add(uint64(42), -5)
	f.Fuzz(func(t *testing.T, key uint64, n int) {
		got := jumpback.Bucket(key, n)
		if n < 1 && got != -1 || n >= 1 && (got < 0 || got >= min(n, 1<<31-1)) {
			t.Fatalf("Bucket(%d, %d) = %d", key, n, got)
		}
	})
}

var sinkBucket int

// BenchmarkBucket compares JumpBackHash with jump hash in one run.
func BenchmarkBucket(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 10000, 1 << 20} {
		for _, f := range []struct {
			name string
			hash func(uint64, int) int
		}{{"jump", jump.Bucket}, {"jumpback", jumpback.Bucket}} {
			b.Run(f.name+"/buckets="+itoa(n), func(b *testing.B) {
				b.ReportAllocs()
				for i := uint64(0); b.Loop(); i++ {
					sinkBucket = f.hash(i*0x9e3779b97f4a7c15, n)
				}
			})
		}
	}
}

func itoa(n int) string {
	s := ""
	for {
		s = string(rune('0'+n%10)) + s
		if n /= 10; n == 0 {
			return s
		}
	}
}
