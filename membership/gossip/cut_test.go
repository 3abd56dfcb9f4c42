package gossip

import (
	"errors"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
)

// cutTransport is memberlist's network transport with some members cut
// off: the packets to and from their addresses are lost, and the streams
// dialled to those in dial are refused. Streams they dial in are not
// (their source port says nothing of who dials).
type cutTransport struct {
	memberlist.NodeAwareTransport
	packets chan *memberlist.Packet
	closing chan struct{} // closed at Shutdown: packets are drained, not forwarded
	stop    chan struct{}
	done    chan struct{}

	mu      sync.Mutex
	packet  map[string]bool // addresses whose packets are lost, both ways
	dial    map[string]bool // addresses whose streams are refused
	sent    int             // packets to those addresses, lost
	stopped bool
}

// cut wraps t; it forwards the packets it keeps until Shutdown.
func cut(t memberlist.NodeAwareTransport) *cutTransport {
	c := &cutTransport{NodeAwareTransport: t, packets: make(chan *memberlist.Packet), closing: make(chan struct{}),
		stop: make(chan struct{}), done: make(chan struct{}), packet: map[string]bool{}, dial: map[string]bool{}}
	go func() {
		defer close(c.done)
		for {
			select {
			case <-c.stop:
				return
			case p := <-t.PacketCh():
				if c.lost(p.From.String()) {
					continue
				}
				select {
				case c.packets <- p:
				case <-c.closing: // memberlist reads no more: drop it
				}
			}
		}
	}()
	return c
}

// set cuts the packets of addrs, and the streams to those of dial.
func (c *cutTransport) set(packets, dial []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.packet, c.dial = map[string]bool{}, map[string]bool{}
	for _, a := range packets {
		c.packet[a] = true
	}
	for _, a := range dial {
		c.dial[a] = true
	}
}

func (c *cutTransport) lost(addr string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.packet[addr]
}

// lostSent returns how many packets sent to addresses cut off were lost.
func (c *cutTransport) lostSent() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sent
}

func (c *cutTransport) PacketCh() <-chan *memberlist.Packet { return c.packets }

func (c *cutTransport) WriteTo(b []byte, addr string) (time.Time, error) {
	return c.WriteToAddress(b, memberlist.Address{Addr: addr})
}

func (c *cutTransport) WriteToAddress(b []byte, a memberlist.Address) (time.Time, error) {
	c.mu.Lock()
	lost := c.packet[a.Addr]
	if lost {
		c.sent++
	}
	c.mu.Unlock()
	if lost {
		return time.Now(), nil
	}
	return c.NodeAwareTransport.WriteToAddress(b, a)
}

func (c *cutTransport) DialTimeout(addr string, timeout time.Duration) (net.Conn, error) {
	return c.DialAddressTimeout(memberlist.Address{Addr: addr}, timeout)
}

func (c *cutTransport) DialAddressTimeout(a memberlist.Address, timeout time.Duration) (net.Conn, error) {
	c.mu.Lock()
	refused := c.dial[a.Addr]
	c.mu.Unlock()
	if refused {
		return nil, errors.New("cut off")
	}
	return c.NodeAwareTransport.DialAddressTimeout(a, timeout)
}

// Shutdown shuts the transport down while the packets it still reads are
// drained (its listener waits to hand each one over), then stops the
// forwarding.
func (c *cutTransport) Shutdown() error {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return nil
	}
	c.stopped = true
	c.mu.Unlock()
	close(c.closing)
	err := c.NodeAwareTransport.Shutdown()
	close(c.stop)
	<-c.done
	return err
}
