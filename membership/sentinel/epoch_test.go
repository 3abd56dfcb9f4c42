package sentinel_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/internal/resp"
	"github.com/kolco-dev/kolco/membership/sentinel"
)

// fakeSentinel answers SENTINEL MASTER for every master with the primary
// and config-epoch it is given; while silent, it answers nothing.
type fakeSentinel struct {
	addr   string
	mu     sync.Mutex
	ip     string
	port   int
	epoch  int
	silent bool
}

func startFakeSentinel(t *testing.T, port, epoch int) *fakeSentinel {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	f := &fakeSentinel{addr: ln.Addr().String(), ip: "127.0.0.1", port: port, epoch: epoch}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go f.serve(c)
		}
	}()
	return f
}

func (f *fakeSentinel) set(port, epoch int, silent bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.port, f.epoch, f.silent = port, epoch, silent
}

func (f *fakeSentinel) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		v, err := resp.Read(br)
		if err != nil {
			return
		}
		args, _ := v.Strings()
		f.mu.Lock()
		silent := f.silent
		reply := fmt.Sprintf("*10\r\n$4\r\nname\r\n$%d\r\n%s\r\n$2\r\nip\r\n$%d\r\n%s\r\n$4\r\nport\r\n$%d\r\n%d\r\n$5\r\nflags\r\n$6\r\nmaster\r\n$12\r\nconfig-epoch\r\n$%d\r\n%d\r\n",
			len(args[len(args)-1]), args[len(args)-1], len(f.ip), f.ip, len(fmt.Sprint(f.port)), f.port, len(fmt.Sprint(f.epoch)), f.epoch)
		f.mu.Unlock()
		if silent || len(args) < 3 || !strings.EqualFold(args[0], "SENTINEL") {
			continue // a Sentinel that does not answer in time
		}
		if _, err := c.Write([]byte(reply)); err != nil {
			return
		}
	}
}

// TestEpochNeverGoesBack: once the source has taken a master's primary at
// a config-epoch, an asking in which only Sentinels that missed that
// failover answer - the others too slow, or away - keeps it, where it
// took their older primary: a proxy starved of CPU whose askings of the
// up-to-date Sentinels timed out pointed a shard back at its old primary,
// a replica since, and read values older than writes acknowledged on the
// new one (a fault schedule's seed 15 of the long run: a Redis cache on
// Sentinel; 66 stale reads).
func TestEpochNeverGoesBack(t *testing.T) {
	fresh := []*fakeSentinel{startFakeSentinel(t, 7002, 2), startFakeSentinel(t, 7002, 2)}
	stale := startFakeSentinel(t, 7001, 1)
	src := &sentinel.Source{Sentinels: []string{fresh[0].addr, fresh[1].addr, stale.addr},
		Masters: []kolco.Node{{ID: "s1"}}, Timeout: 200 * time.Millisecond}
	v, err := src.Read(context.Background())
	if err != nil || len(v.Nodes) != 1 || v.Nodes[0].Addr != "127.0.0.1:7002" {
		t.Fatalf("with every Sentinel answering: %v, %v; want the primary of epoch 2", v.Nodes, err)
	}
	for _, f := range fresh {
		f.set(7002, 2, true)
	}
	v, err = src.Read(context.Background())
	if err != nil || len(v.Nodes) != 1 || v.Nodes[0].Addr != "127.0.0.1:7002" {
		t.Fatalf("with only the Sentinel that missed the failover answering: %v, %v; want the primary of epoch 2 kept", v.Nodes, err)
	}
	fresh[0].set(7003, 3, false) // a later failover
	v, err = src.Read(context.Background())
	if err != nil || len(v.Nodes) != 1 || v.Nodes[0].Addr != "127.0.0.1:7003" {
		t.Fatalf("after a later failover: %v, %v; want the primary of epoch 3", v.Nodes, err)
	}
	// Every Sentinel watching the master afresh (their state lost): more
	// than half agree on an older epoch, and are taken.
	for _, f := range append(fresh, stale) {
		f.set(7005, 0, false)
	}
	v, err = src.Read(context.Background())
	if err != nil || len(v.Nodes) != 1 || v.Nodes[0].Addr != "127.0.0.1:7005" {
		t.Fatalf("with every Sentinel at a new epoch 0: %v, %v; want their primary", v.Nodes, err)
	}
}
