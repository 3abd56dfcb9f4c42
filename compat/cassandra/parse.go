package cassandra

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/kolco-dev/kolco"
)

// ParseNodetoolRing reads the output of `nodetool ring`: every line whose
// first field is an IP address and whose last field is an integer gives
// one token of that endpoint; headers, datacenter banners and the lone
// token line at the top are skipped. Endpoints come out in order of first
// appearance. The error wraps [kolco.ErrNoNodes] when no token line is found.
func ParseNodetoolRing(text string) ([]Endpoint, error) {
	var out []Endpoint
	at := map[string]int{}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		addr, err := netip.ParseAddr(f[0])
		if err != nil {
			continue
		}
		tok, err := strconv.ParseInt(f[len(f)-1], 10, 64)
		if err != nil {
			continue
		}
		a := addr.String()
		i, ok := at[a]
		if !ok {
			i = len(out)
			at[a] = i
			out = append(out, Endpoint{Addr: a})
		}
		out[i].Tokens = append(out[i].Tokens, tok)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: cassandra: no token lines in nodetool ring output", kolco.ErrNoNodes)
	}
	return out, nil
}
