package haproxy_test

import (
	"fmt"

	"github.com/kolco-dev/kolco/compat/haproxy"
)

// Find the server HAProxy picks for a header value, from the backend
// section. The output is pinned: HAProxy 2.6 itself sends X-Key: user:42
// to web1, X-Key: order:3 to web3 and X-Key: order:1 to web2.
func Example() {
	b, err := haproxy.ParseBackend(`
backend app
    balance hdr(X-Key)
    hash-type consistent
    server web1 127.0.0.1:39201 weight 2 check
    server web2 127.0.0.1:39202 id 7 check
    server web3 127.0.0.1:39203 check
`)
	if err != nil {
		panic(err)
	}
	p, err := haproxy.New(b.Servers, b.Hash)
	if err != nil {
		panic(err)
	}
	for _, k := range []string{"user:42", "order:3", "order:1"} {
		n, _ := p.Locate(k)
		fmt.Println(k, "->", n.ID, n.Addr)
	}
	// Output:
	// user:42 -> web1 127.0.0.1:39201
	// order:3 -> web3 127.0.0.1:39203
	// order:1 -> web2 127.0.0.1:39202
}
