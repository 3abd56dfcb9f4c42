package proxy

import (
	"bytes"
	"context"

	"github.com/kolco-dev/kolco/proxy/redis"
)

// listKeys lists b's keys with SCAN.
func (f redisFront) listKeys(ctx context.Context, b *backend, each func(string) error) error {
	cursor := "0"
	for {
		keys, next, err := f.scan(ctx, b, cursor, 1000)
		if err != nil {
			return err
		}
		for _, k := range keys {
			if err := each(k); err != nil {
				return err
			}
		}
		if next == "0" {
			return nil
		}
		cursor = next
	}
}

// holds asks b EXISTS of each key, all sent at once.
func (redisFront) holds(ctx context.Context, b *backend, keys []string) ([]bool, error) {
	out := make([]bool, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	var req []byte
	for _, k := range keys {
		req = redis.AppendArgs(req, [][]byte{[]byte("EXISTS"), []byte(k)})
	}
	replies, err := redisAsk(ctx, b, req, len(keys))
	if err != nil {
		return nil, err
	}
	for i, r := range replies {
		out[i] = !bytes.Equal(r, []byte(":0\r\n"))
	}
	return out, nil
}

// sizes tells no lengths: a Redis value may be a list, a hash or a set,
// whose bytes no one command gives as memcached's length does.
func (redisFront) sizes(context.Context, *backend, []string) ([]int64, error) { return nil, nil }
