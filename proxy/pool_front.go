package proxy

import (
	"errors"
	"io"

	"github.com/kolco-dev/kolco/proxy/memcache"
	"github.com/kolco-dev/kolco/proxy/redis"
)

// replies reads a server's replies, each into the op it answers, in the
// pool's protocol: memcached's or Redis's.
type replies interface {
	// Wait blocks until the next reply has begun to arrive.
	Wait() error
	// Buffered returns the bytes read from the server and not yet read
	// as replies.
	Buffered() int
	// read reads the next reply into o. After an error for which inStep
	// reports true the stream is still in step; after any other the
	// connection must be closed.
	read(o *op) error
	// badReply returns the protocol's error for bytes that are no reply.
	badReply() error
}

// newReplies returns the reader of a server connection's replies.
func (p *pool) newReplies(r io.Reader) replies {
	if p.cfg.Redis {
		return newRedisReplies(r, p.cfg)
	}
	return &memcacheReplies{rr: memcache.NewReplyReader(r, p.cfg.MaxValueSize)}
}

// memcacheReplies reads memcached's replies.
type memcacheReplies struct {
	rr *memcache.ReplyReader
}

func (m *memcacheReplies) Wait() error     { return m.rr.Wait() }
func (m *memcacheReplies) Buffered() int   { return m.rr.Buffered() }
func (m *memcacheReplies) badReply() error { return memcache.ErrBadReply }

func (m *memcacheReplies) read(o *op) (err error) {
	m.rr.Budget = o
	o.reply, o.spans, err = m.rr.Read(o.reply[:0], o.cmd, o.spans[:0])
	return err
}

// inStep reports whether a reply error left the server's stream in step:
// a reply over the limits or with no room in the buffers, read and
// dropped, or a Redis server's answer that it is still loading its data.
func inStep(err error) bool {
	return memcache.Dropped(err) || errors.Is(err, redis.ErrReplyTooLarge) || errors.Is(err, redis.ErrNoRoom) ||
		errors.Is(err, redis.ErrReplyTooDeep) || errors.Is(err, ErrServerLoading)
}

// answered records how the server answered a request, err being nil or
// an error for which inStep is true, and returns the request's error. A
// reply over the limits fails its request, and the server is fine. A
// Redis server that is loading its data is not: its -LOADING reply
// stands, and counts as its failure, so that it is treated as down
// until it is ready.
func (b *backend) answered(err error) error {
	switch {
	case err == nil:
		b.served()
		return nil
	case errors.Is(err, ErrServerLoading):
		b.fail(serverError(b.addr, "", err), 1)
		return nil
	}
	b.served()
	return serverError(b.addr, "", err)
}
