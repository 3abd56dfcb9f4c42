package binomial_test

import (
	"testing"

	"github.com/kolco-dev/kolco/binomial"
	"github.com/kolco-dev/kolco/kolcotest"
)

func TestBucket(t *testing.T) { kolcotest.RunBucket(t, binomial.Bucket) }
