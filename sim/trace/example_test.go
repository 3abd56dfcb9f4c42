package trace_test

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kolco-dev/kolco/sim/trace"
)

// Reading what redis-cli MONITOR printed: the format is detected, MGET is a
// request a key, and PING, which names no key, is counted apart.
func ExampleOpen() {
	capture := `OK
1700000000.000125 [0 10.0.0.7:51234] "GET" "user:42"
1700000000.000301 [0 10.0.0.7:51234] "SET" "user:42" "hello"
1700000000.000412 [0 10.0.0.9:40001] "MGET" "user:42" "user:7"
1700000000.000500 [0 10.0.0.9:40001] "PING"
`
	r, err := trace.Open(strings.NewReader(capture), trace.Auto)
	if err != nil {
		fmt.Println(err)
		return
	}
	for {
		req, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(req.Time%1e9/1e3, req.Command, req.Key, req.Op, req.Size)
	}
	fmt.Println("keyless:", r.Stats().Keyless)
	// Output:
	// 125 get user:42 read -1
	// 301 set user:42 write 5
	// 412 mget user:42 read -1
	// 412 mget user:7 read -1
	// keyless: 1
}

// Writing kolco's own trace format: a header naming the version, then a
// line a request, the key percent-encoded where it must be.
func ExampleWriter() {
	w := trace.NewWriter(os.Stdout)
	w.Write(trace.Request{Time: 1767225600_000125000, Key: "user:42", Size: 512, Command: "get", Result: trace.Hit})
	w.Write(trace.Request{Time: 1767225600_000340000, Key: "a b%", Size: -1, Command: "GET", Result: trace.Miss})
	if err := w.Flush(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// #kolco-trace v1
	// # time key size command result
	// 1767225600.000125000 user:42 512 get hit
	// 1767225600.000340000 a%20b%25 - get miss
}
