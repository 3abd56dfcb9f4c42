package compat_test

import (
	"fmt"

	"github.com/kolco-dev/kolco/compat"
)

// Build places keys as HAProxy does for one backend of a whole haproxy.cfg.
func ExampleBuild() {
	cfg := []byte(`
defaults
    hash-type consistent
backend web
    balance hdr(X-Key)
    server web1 10.0.0.1:80
    server web2 10.0.0.2:80 weight 3
backend api
    server api1 10.0.1.1:80
`)
	p, err := compat.Build("haproxy", compat.Input{Config: cfg, Select: "web"})
	if err != nil {
		fmt.Println(err)
		return
	}
	n, _ := p.Locate("user:42")
	fmt.Println(n.ID)

	_, err = compat.Build("haproxy", compat.Input{Config: cfg})
	fmt.Println(err)
	// Output:
	// web2
	// compat: the configuration has 2 backends (web, api): choose one
}
