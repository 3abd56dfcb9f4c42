package grpcring_test

import (
	"testing"

	"github.com/kolco-dev/kolco/compat/grpcring"
)

var sinkIndex int

func TestLocateIndexDoesNotAllocate(t *testing.T) {
	r, err := grpcring.New([]grpcring.Endpoint{{Addr: "a:1"}, {Addr: "b:1", Weight: 2}}, grpcring.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(1000, func() { sinkIndex, _ = r.LocateIndex("user:42") }); n != 0 {
		t.Fatalf("%v allocations per lookup", n)
	}
}
