package main

import "fmt"

// plural returns n with the noun that agrees with it: "1 node", "2 nodes",
// "0 nodes".
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
