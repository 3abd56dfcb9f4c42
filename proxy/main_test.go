package proxy

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/kolco-dev/kolco/internal/testproc"
)

// testParallel is how many parallel tests run at once unless
// -test.parallel says otherwise. They are most of the package's tests -
// the fault and change tests over every distribution, failovers, moves -
// each mostly waiting for servers to fail, stall or come back; with the
// default (GOMAXPROCS) a machine of two cores idles through them. Six,
// not four: side by side at load 15-60 on two cores, the package took
// 537 s and 544 s with six where it took 559 s and over 600 s with four,
// with no test failed; the tests that time or count themselves run
// serial, before the parallel ones, and the others' bounds are
// stretched by realprog.Busy. A test heavier than that bounds itself
// (see the stall tests' semaphores).
const testParallel = 6

func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if fuzz := flag.Lookup("test.fuzz"); !given && (fuzz == nil || fuzz.Value.String() == "") && runtime.GOMAXPROCS(0) < testParallel {
		_ = flag.Set("test.parallel", strconv.Itoa(testParallel))
	}
	os.Exit(testproc.Main(m.Run))
}
