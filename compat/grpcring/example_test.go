package grpcring_test

import (
	"fmt"

	"github.com/kolco-dev/kolco/compat/grpcring"
)

// The backend grpc-go's ring_hash sends each request to, given the value
// of the request hash header.
func Example() {
	ring, err := grpcring.New([]grpcring.Endpoint{
		{Addr: "10.0.0.1:50051"},
		{Addr: "10.0.0.2:50051", Weight: 2},
		{Addr: "10.0.0.3:50051", HashKey: "backend-c"},
	}, grpcring.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("entries:", ring.Size())
	n, _ := ring.Locate("user:42")
	fmt.Println("user:42 goes to", n.Addr)
	counts := map[string]int{}
	for i := range 10000 {
		n, _ := ring.Locate(fmt.Sprint("user:", i))
		counts[n.Addr]++
	}
	fmt.Println(counts)
	// Output:
	// entries: 1024
	// user:42 goes to 10.0.0.2:50051
	// map[10.0.0.1:50051:2670 10.0.0.2:50051:4832 10.0.0.3:50051:2498]
}
