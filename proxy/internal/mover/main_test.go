package mover

import (
	"os"
	"testing"

	"github.com/kolco-dev/kolco/internal/testproc"
)

// TestMain fails the tests when a program they started outlives them
// (testproc.Main).
func TestMain(m *testing.M) { os.Exit(testproc.Main(m.Run)) }
