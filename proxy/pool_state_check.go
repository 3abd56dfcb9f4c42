package proxy

import (
	"context"
	"errors"
	"fmt"

	"github.com/kolco-dev/kolco/internal/bytestr"
)

// maxAfreshMisses bounds a count of the keys that miss: it says "at
// least" past it, and a warning needs no more.
const maxAfreshMisses = 100000

// afreshBatch is how many keys are asked about at once.
const afreshBatch = 500

// errEnoughMisses stops a listing that has counted enough.
var errEnoughMisses = errors.New("enough misses counted")

// afreshMisses counts the keys whose reads miss because the pool's
// placement began afresh: keys a server holds that the placement reads
// from another server, which does not hold them. A key that also sits
// where the placement looks (written again since) is no miss; one whose
// only copy sits elsewhere is, until it is written again, expires or is
// deleted. It lists every server's keys and asks the others about the keys
// they should hold (the front's listKeys and holds), on connections of its
// own; it stops at maxAfreshMisses.
func (a *afreshCheck) afreshMisses(ctx context.Context) (int64, error) {
	var misses int64
	for _, b := range a.backends {
		n, err := a.serverMisses(ctx, b, maxAfreshMisses-misses)
		misses += n
		if errors.Is(err, errEnoughMisses) {
			return misses, nil
		}
		if err != nil {
			return misses, fmt.Errorf("%s: %w", b.addr, err)
		}
	}
	return misses, nil
}

// serverMisses counts, up to limit, the keys b holds that miss where the
// placement reads them.
func (a *afreshCheck) serverMisses(ctx context.Context, b *backend, limit int64) (int64, error) {
	pl := a.place.Load()
	var sc routeScratch
	elsewhere := map[*backend][]string{} // keys by the server their reads go to
	var misses int64
	check := func(force bool) error {
		for o, keys := range elsewhere {
			if len(keys) < afreshBatch && !force {
				continue
			}
			held, err := a.front.holds(ctx, o, keys)
			if err != nil {
				return err
			}
			for _, h := range held {
				if !h {
					misses++
				}
			}
			delete(elsewhere, o)
		}
		if misses >= limit {
			return errEnoughMisses
		}
		return nil
	}
	each := func(key string) error {
		read := pl.route(bytestr.Of(key), false, &sc)
		if len(read) == 0 || read[0].addr == b.addr {
			return nil
		}
		elsewhere[read[0]] = append(elsewhere[read[0]], key)
		return check(false)
	}
	err := a.front.listKeys(ctx, b, each)
	if err == nil {
		err = check(true)
	}
	return misses, err
}
