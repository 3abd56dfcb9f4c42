package rediscluster

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kolco-dev/kolco"
)

// ParseClusterNodes reads the output of CLUSTER NODES and returns the
// masters that serve slots, in the order listed. Each line is
// "<id> <ip:port@cport[,hostname]> <flags> <master> <ping> <pong> <epoch>
// <link> <slot>...", a slot being "N" or "N-M"; migration entries in
// brackets are skipped. Replicas and masters without slots are left out.
// The error wraps [kolco.ErrBadConfig] for a line it cannot read and
// [kolco.ErrNoNodes] when no master serves a slot.
func ParseClusterNodes(text string) ([]Master, error) {
	var out []Master
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) < 8 {
			return nil, fmt.Errorf("%w: redis: CLUSTER NODES line %q has %d fields, want at least 8", kolco.ErrBadConfig, line, len(f))
		}
		if !hasFlag(f[2], "master") {
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@")
		m := Master{ID: f[0], Addr: addr}
		for _, s := range f[8:] {
			if strings.HasPrefix(s, "[") {
				continue
			}
			r, err := parseRange(s)
			if err != nil {
				return nil, fmt.Errorf("redis: node %s: %w", f[0], err)
			}
			m.Slots = append(m.Slots, r)
		}
		if len(m.Slots) > 0 {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: redis: no master serves a slot", kolco.ErrNoNodes)
	}
	return out, nil
}

func hasFlag(flags, want string) bool {
	for _, f := range strings.Split(flags, ",") {
		if f == want {
			return true
		}
	}
	return false
}

func parseRange(s string) (SlotRange, error) {
	a, b, isRange := strings.Cut(s, "-")
	first, err1 := strconv.Atoi(a)
	last, err2 := first, error(nil)
	if isRange {
		last, err2 = strconv.Atoi(b)
	}
	if err1 != nil || err2 != nil || first < 0 || last >= SlotCount || first > last {
		return SlotRange{}, fmt.Errorf("%w: bad slot range %q", kolco.ErrBadConfig, s)
	}
	return SlotRange{first, last}, nil
}
