package anchor_test

import (
	"errors"
	"fmt"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/anchor"
)

// The capacity is fixed: a fourth node does not fit in three buckets.
func ExamplePlacement_Add() {
	h, _ := anchor.New([]kolco.Node{{ID: "a"}, {ID: "b"}}, anchor.Config{Capacity: 3})
	fmt.Println(h.Add(kolco.Node{ID: "c"}))
	err := h.Add(kolco.Node{ID: "d"})
	fmt.Println(errors.Is(err, anchor.ErrCapacity))
	// Output:
	// <nil>
	// true
}
