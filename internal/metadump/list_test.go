package metadump

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/testproc"
)

// startMemcached runs a real memcached until the test ends, on a free
// loopback port, or on a unix socket when unix is set, and returns its
// network and address.
func startMemcached(t *testing.T, unix bool) (string, string) {
	t.Helper()
	bin := realprog.Binary(t, "memcached", "memcached")
	network, addr, where := "tcp", "", []string{}
	if unix {
		network, addr = "unix", filepath.Join(t.TempDir(), "mc.sock")
		where = []string{"-s", addr}
	} else {
		port := realprog.FreePorts(t, 1)[0]
		addr = fmt.Sprintf("127.0.0.1:%d", port)
		where = []string{"-l", "127.0.0.1", "-p", fmt.Sprint(port)}
	}
	args := append(where, "-U", "0", "-m", "64", "-t", "1")
	if os.Geteuid() == 0 {
		args = append(args, "-u", "root")
	}
	cmd := exec.Command(bin, args...)
	if err := testproc.Start(cmd); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })
	deadline := time.Now().Add(realprog.Patience)
	for {
		c, err := net.DialTimeout(network, addr, time.Second)
		if err == nil {
			c.Close()
			return network, addr
		}
		select {
		case <-exited:
			t.Fatal("memcached exited during startup")
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("memcached not listening at %s: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond) // polling for readiness, not ordering
	}
}

// TestListRealMemcached stores keys with bytes memcached escapes in its
// dump and lists them back, over TCP and a unix socket: every key once,
// decoded, with the CAS value memcached gives it ("mg <key> c").
func TestListRealMemcached(t *testing.T) {
	for _, unix := range []bool{false, true} {
		t.Run(fmt.Sprintf("unix=%v", unix), func(t *testing.T) {
			network, addr := startMemcached(t, unix)
			conn, err := net.DialTimeout(network, addr, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(30 * time.Second))
			r := bufio.NewReader(conn)
			cas := map[string]uint64{}
			for i := range 200 {
				k := fmt.Sprintf("user:%d/100%%+é~%d", i, i%7)
				fmt.Fprintf(conn, "set %s 0 0 1\r\nv\r\nmg %s c\r\n", k, k)
				if line, err := r.ReadString('\n'); err != nil || line != "STORED\r\n" {
					t.Fatalf("set: %q, %v", line, err)
				}
				line, err := r.ReadString('\n')
				c, ok := strings.CutPrefix(strings.TrimSpace(line), "HD c")
				if err != nil || !ok {
					t.Fatalf("mg: %q, %v", line, err)
				}
				if cas[k], err = strconv.ParseUint(c, 10, 64); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err = List(ctx, network, addr, func(it Item) error {
				want, ok := cas[it.Key]
				if !ok {
					return fmt.Errorf("listed key %q was never stored, or twice", it.Key)
				}
				if it.Cas != want {
					return fmt.Errorf("%q: cas %d, mg says %d", it.Key, it.Cas, want)
				}
				delete(cas, it.Key)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(cas) != 0 {
				t.Fatalf("%d keys stored and not listed", len(cas))
			}
		})
	}
}

// TestListStopsWhenAsked: an error from the callback ends the listing
// and is returned.
func TestListStopsWhenAsked(t *testing.T) {
	network, addr := startMemcached(t, false)
	conn, err := net.Dial(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for i := range 50 {
		fmt.Fprintf(conn, "set k%d 0 0 1 noreply\r\nv\r\n", i)
	}
	fmt.Fprintf(conn, "mn\r\n")
	if line, err := bufio.NewReader(conn).ReadString('\n'); err != nil || line != "MN\r\n" {
		t.Fatalf("%q, %v", line, err)
	}
	stop := errors.New("enough")
	seen := 0
	err = List(context.Background(), network, addr, func(Item) error {
		if seen++; seen == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || seen != 3 {
		t.Fatalf("%v after %d items; want the callback's error after 3", err, seen)
	}
}

// TestListAsksABusyServerAgain: a server busy with another crawl is asked
// again on a new connection until it answers; one that stays busy gives
// ErrBusy when the context ends.
func TestListAsksABusyServerAgain(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	busy := make(chan int, 1)
	busy <- 2 // the first two requests find the server busy
	served := make(chan struct{})
	go func() {
		defer close(served)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			line, _ := bufio.NewReader(c).ReadString('\n')
			n := <-busy
			switch {
			case line != Command:
				io.WriteString(c, "ERROR\r\n")
			case n != 0:
				io.WriteString(c, "BUSY currently processing crawler request\r\n")
				n--
			default:
				io.WriteString(c, "key=a size=5 cas=3\nEND\r\n")
			}
			busy <- n
			c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var items []Item
	err = List(ctx, "tcp", ln.Addr().String(), func(it Item) error { items = append(items, it); return nil })
	if err != nil || len(items) != 1 || items[0] != (Item{Key: "a", Size: 5, Exp: -1, Cas: 3}) {
		t.Fatalf("%+v, %v", items, err)
	}
	<-busy
	busy <- 1 << 30 // busy from now on
	short, cancel2 := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel2()
	if err := List(short, "tcp", ln.Addr().String(), func(Item) error { return nil }); !errors.Is(err, ErrBusy) {
		t.Errorf("always busy: %v, want ErrBusy", err)
	}
	ln.Close()
	<-served
}
