//go:build !purego

package keyhash_test

import (
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/keyhash"
)

// The purego twin copies the key for md5 and crc32, so the zero-allocation
// promise is checked only for the default build.
func TestNoAllocs(t *testing.T) {
	key := strings.Repeat("long-key-", 20)
	for _, name := range keyhash.Names() {
		f, _ := keyhash.Parse(name)
		if n := testing.AllocsPerRun(100, func() { sink += f(key) }); n != 0 {
			t.Errorf("%s allocates %v times per hash", name, n)
		}
	}
}
