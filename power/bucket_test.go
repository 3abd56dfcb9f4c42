package power_test

import (
	"testing"

	"github.com/kolco-dev/kolco/kolcotest"
	"github.com/kolco-dev/kolco/power"
)

func TestBucket(t *testing.T) { kolcotest.RunBucket(t, power.Bucket) }
