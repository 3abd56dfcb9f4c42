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
	err := mcAskKeys(ctx, b, keys, memcache.AppendMetaCas, func(i int, reply []byte) error {
		_, found, err := memcache.ParseMetaCas(reply)
		out[i] = found
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// sizes asks b for the length alone of each key's value (mg <key> s), all
// sent at once; -1 is a key it does not hold or no command can name.
func (memcacheFront) sizes(ctx context.Context, b *backend, keys []string) ([]int64, error) {
	out := make([]int64, len(keys))
	for i := range out {
		out[i] = -1
	}
	err := mcAskKeys(ctx, b, keys, memcache.AppendMetaSize, func(i int, reply []byte) error {
		n, found, err := memcache.ParseMetaSize(reply)
		if found {
			out[i] = n
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// mcAskKeys sends b one meta get of each key that a command can name
// (appendReq writes it), all at once on a connection of its own, and
// gives each reply to take with the key's index in keys.
func mcAskKeys(ctx context.Context, b *backend, keys []string, appendReq func(dst, key []byte, base64 bool) []byte, take func(i int, reply []byte) error) error {
	var req []byte
	asked := make([]int, 0, len(keys))
	for i, k := range keys {
		if tok, b64, ok := memcache.KeyToken(nil, []byte(k)); ok {
			req = appendReq(req, tok, b64)
			asked = append(asked, i)
		}
	}
	if len(asked) == 0 {
		return nil
	}
	conn, err := b.dialOwn(ctx, b.pool.cfg.Timeout)
	if err != nil {
		return err
	}
	defer conn.Close()
	replies, err := mcAskAll(conn, b.pool.cfg.Timeout, req, len(asked), memcache.CmdMetaGet)
	if err != nil {
		return err
	}
	for j, i := range asked {
		if err := take(i, replies[j]); err != nil {
			return err
		}
	}
	return nil
}
