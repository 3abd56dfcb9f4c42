package proxy

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/kolco-dev/kolco/proxy/memcache"
)

// memcacheFront is the memcached protocol's front: text and meta
// commands from clients, split over servers by key and merged back, as
// twemproxy's proto/nc_memcache.c does for its core.
type memcacheFront struct{}

// handshake does nothing: a memcached connection needs no preparing.
func (memcacheFront) handshake(*backend, net.Conn) error { return nil }

// probe asks the server for its version on a connection of its own.
func (memcacheFront) probe(ctx context.Context, b *backend) error {
	reply, err := mcAsk(ctx, b, b.pool.cfg.HealthCheck.Timeout, "version\r\n", memcache.CmdVersion)
	if err != nil {
		return err
	}
	if len(reply) < 8 || string(reply[:8]) != "VERSION " {
		return fmt.Errorf("%w: %q", memcache.ErrBadReply, reply)
	}
	return nil
}

// rejoin empties a server that was down, in a pool with replicas or under
// rehash: it missed the writes and deletes made meanwhile (to the key's
// other copies, or under rehash to the server that stood in for it), and
// must not serve a value older than one written meanwhile.
func (f memcacheFront) rejoin(ctx context.Context, b *backend) error {
	cfg := b.pool.cfg
	if cfg.Replicas <= 1 && cfg.Ejection != EjectRehash {
		return nil
	}
	if err := f.empty(ctx, b); err != nil {
		return fmt.Errorf("flush_all before rejoining: %w", err)
	}
	b.pool.log.Info("server emptied before rejoining: it missed the writes made while it was down", "server", b.name(), "addr", b.addr)
	return nil
}

// empty sends flush_all on a connection of its own.
func (memcacheFront) empty(ctx context.Context, b *backend) error {
	reply, err := mcAsk(ctx, b, b.pool.cfg.Timeout, "flush_all\r\n", memcache.CmdFlushAll)
	if err != nil {
		return err
	}
	if string(reply) != "OK\r\n" {
		return fmt.Errorf("%w to flush_all: %q", memcache.ErrBadReply, reply)
	}
	return nil
}

// sweep deletes the copies a change left on the pool's exclusive servers
// (see mc_sweep.go).
func (memcacheFront) sweep(p *pool, m *migration) { p.sweepAfter(m) }

func (memcacheFront) errorReply(err error) []byte { return appendErrorReply(nil, err) }

func (memcacheFront) commands() int { return int(memcache.CmdMetaDebug) + 1 }

func (memcacheFront) commandName(i int) string { return memcache.Command(i).String() }

// mcAsk sends one request to b on a connection of its own and reads its
// reply.
func mcAsk(ctx context.Context, b *backend, timeout time.Duration, req string, cmd memcache.Command) ([]byte, error) {
	conn, err := b.dialOwn(ctx, timeout)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(req)); err != nil {
		return nil, err
	}
	reply, _, err := memcache.NewReplyReader(conn, 0).Read(nil, cmd, nil)
	return reply, err
}
