package proxy

import (
	"context"

	"github.com/kolco-dev/kolco/internal/metadump"
	"github.com/kolco-dev/kolco/proxy/memcache"
)

// listKeys lists b's items with lru_crawler metadump.
func (memcacheFront) listKeys(ctx context.Context, b *backend, each func(string) error) error {
	return metadump.ListDial(ctx, b.dialSweep, func(it metadump.Item) error { return each(it.Key) })
}

// holds asks b for the CAS value alone of each key (mg <key> c), all sent
// at once: EN is a key it does not hold. A key no command can name is
// held by no one.
func (memcacheFront) holds(ctx context.Context, b *backend, keys []string) ([]bool, error) {
	out := make([]bool, len(keys))
	var req []byte
	asked := make([]int, 0, len(keys))
	for i, k := range keys {
		tok, b64, ok := memcache.KeyToken(nil, []byte(k))
		if !ok {
			continue
		}
		req = memcache.AppendMetaCas(req, tok, b64)
		asked = append(asked, i)
	}
	if len(asked) == 0 {
		return out, nil
	}
	conn, err := b.dialOwn(ctx, b.pool.cfg.Timeout)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	replies, err := mcAskAll(conn, b.pool.cfg.Timeout, req, len(asked), memcache.CmdMetaGet)
	if err != nil {
		return nil, err
	}
	for j, i := range asked {
		_, found, err := memcache.ParseMetaCas(replies[j])
		if err != nil {
			return nil, err
		}
		out[i] = found
	}
	return out, nil
}

// sizes asks b for the length alone of each key's value (mg <key> s), all
// sent at once.
func (memcacheFront) sizes(ctx context.Context, b *backend, keys []string) ([]int64, error) {
	out := make([]int64, len(keys))
	var req []byte
	asked := make([]int, 0, len(keys))
	for i, k := range keys {
		out[i] = -1
		if tok, b64, ok := memcache.KeyToken(nil, []byte(k)); ok {
			req = memcache.AppendMetaSize(req, tok, b64)
			asked = append(asked, i)
		}
	}
	if len(asked) == 0 {
		return out, nil
	}
	conn, err := b.dialOwn(ctx, b.pool.cfg.Timeout)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	replies, err := mcAskAll(conn, b.pool.cfg.Timeout, req, len(asked), memcache.CmdMetaGet)
	if err != nil {
		return nil, err
	}
	for j, i := range asked {
		n, found, err := memcache.ParseMetaSize(replies[j])
		if err != nil {
			return nil, err
		}
		if found {
			out[i] = n
		}
	}
	return out, nil
}
