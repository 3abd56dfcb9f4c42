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
// default (GOMAXPROCS) a machine of two cores idles through them. A test
// heavier than that bounds itself (see the stall tests' semaphores).
const testParallel = 4

func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if fuzz := flag.Lookup("test.fuzz"); !given && (fuzz == nil || fuzz.Value.String() == "") && runtime.GOMAXPROCS(0) < testParallel {
		_ = flag.Set("test.parallel", strconv.Itoa(testParallel))
	}
	os.Exit(testproc.Main(m.Run))
}
