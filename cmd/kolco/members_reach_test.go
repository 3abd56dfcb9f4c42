package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/internal/realprog"
)

// TestMembersEtcdRefused: against an address where nothing listens, each
// command that asks etcd once says that etcd refused the connection there
// and names --endpoints, where it waited out --timeout and said "context
// deadline exceeded".
func TestMembersEtcdRefused(t *testing.T) {
	refused := fmt.Sprintf("http://127.0.0.1:%d", realprog.FreePorts(t, 1)[0]) // closed again: nothing listens
	for _, args := range [][]string{
		{"list"}, {"add", "mc-1", "--addr", "127.0.0.1:11211"}, {"remove", "mc-1"}, {"reweight", "mc-1", "2"}, {"drain", "mc-1"}, {"state"},
	} {
		t.Run(args[0], func(t *testing.T) {
			argv := append([]string{"members", "--prefix", "/kolco/cache/", "--endpoints", refused, "--timeout", "1m"}, args...)
			code, _, errs := runCLI(t, "", argv...)
			if code != 1 || !strings.Contains(errs, "refused") || !strings.Contains(errs, "--endpoints") || !strings.Contains(errs, refused) {
				t.Errorf("exit %d: %q; want 1, saying etcd refused at %s and naming --endpoints", code, errs, refused)
			}
		})
	}
}
