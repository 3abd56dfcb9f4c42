package membership_test

import (
	"runtime"
	"testing"
	"time"
)

// checkNoLeak records the number of goroutines and, when the test ends,
// fails it if more are left after a short grace for goroutines already on
// their way out.
func checkNoLeak(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				t.Errorf("%d goroutines left, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
				return
			}
			time.Sleep(10 * time.Millisecond) // waiting for exits already under way
		}
	})
}
