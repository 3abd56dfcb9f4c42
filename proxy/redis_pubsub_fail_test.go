package proxy

import (
	"errors"
	"io"
	"strings"
	"syscall"
	"testing"
)

// TestRedisSubscribeFailureCloses: a SUBSCRIBE whose server cannot be
// reached (down, not yet ejected) gets the error, and then the client's
// connection is closed - the gap's report - rather than left open and
// subscribed to nothing, where a client such as go-redis's PubSub would
// wait for ever for messages of a channel it believes it has (the fault
// behind TestRedisPubSubThroughChanges's flakes on a loaded machine).
func TestRedisSubscribeFailureCloses(t *testing.T) {
	t.Parallel()
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0)}
	s := startProxy(t, redisPoolYAML("", rs...))
	p := s.testPool("p")
	owner := ownerOf(p, "news")
	for _, r := range rs {
		if r.addr == owner {
			r.stop()
		}
	}
	c := dialRedis(t, s.Addr("p").String())
	if got := c.do("SUBSCRIBE", "news"); !strings.HasPrefix(got, "-ERR ") {
		t.Fatalf("SUBSCRIBE to a channel of a dead server: %q, want an error", got)
	}
	c.send("PING")
	got, err := c.read()
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("after the failed SUBSCRIBE, PING: %q, %v; want the connection closed", got, err)
	}
}
