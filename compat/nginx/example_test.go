package nginx_test

import (
	"fmt"

	"github.com/kolco-dev/kolco/compat/nginx"
)

// Find the backend nginx sends a request to, from the upstream block. The
// output is pinned: nginx 1.22 itself sends /?k=user%3A42 and /?k=order%3A3
// to these ports.
func Example() {
	u, err := nginx.ParseUpstream(`
upstream app {
    hash $arg_k consistent;
    server 127.0.0.1:39101 weight=2;
    server 127.0.0.1:39102;
    server 127.0.0.1:39103 max_fails=3;
}`)
	if err != nil {
		panic(err)
	}
	p, err := nginx.NewConsistent(u.Servers)
	if err != nil {
		panic(err)
	}
	// $arg_k is still URL-escaped: hash the text as it appears in the URL.
	for _, k := range []string{"user%3A42", "order%3A3"} {
		n, _ := p.Locate(k)
		fmt.Println(k, "->", n.Addr)
	}
	// Output:
	// user%3A42 -> 127.0.0.1:39101
	// order%3A3 -> 127.0.0.1:39103
}
