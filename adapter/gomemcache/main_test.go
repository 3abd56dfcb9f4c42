package gomemcache_test

import (
	"os"
	"testing"

	"github.com/kolco-dev/kolco/adapter/internal/servertest"
)

func TestMain(m *testing.M) { os.Exit(servertest.Main(m)) }
