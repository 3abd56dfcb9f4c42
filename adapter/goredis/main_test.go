package goredis_test

import (
	"context"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/kolco-dev/kolco/adapter/internal/servertest"
)

// quiet drops go-redis's log lines: the tests stop servers on purpose.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	redis.SetLogger(quiet{})
	os.Exit(servertest.Main(m))
}
