package redis

import (
	"math"

	"github.com/kolco-dev/kolco/proxy/internal/wire"
)

// parseInt parses b as redis-server's string2ll does: an optional minus,
// then digits with no leading zero ("0" alone is allowed), no plus sign, no
// spaces, at most 20 bytes, within int64. Lengths, counts and numkeys all
// go through it in redis-server, so "*01", "$+4" and "-0" are refused here
// as they are there.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || b[0] < '1' || b[0] > '9' {
		return 0, false
	}
	u, ok := wire.ParseUint(b)
	switch {
	case !ok:
		return 0, false
	case neg && u <= 1<<63:
		return int64(-u), true // -1<<63 itself wraps to the right value
	case !neg && u <= math.MaxInt64:
		return int64(u), true
	}
	return 0, false
}
