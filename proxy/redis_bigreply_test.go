package proxy

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
)

// TestLargeReplyOutlivesTimeout: an MGET of large binary values (8 MB
// each; twemproxy's own test_mget_large_binary sends 16 MB) whose reply
// takes several times the pool's timeout to arrive, because the server
// sends it slowly but steadily, is answered; a server that stops in the
// middle of such a reply fails it with nutcracker's "Connection timed out"
// a timeout later. Such an MGET once succeeded alone and timed out after
// other traffic on the same proxy: the timeout counted the whole transfer
// from the request's dispatch, and how long such a reply takes to arrive grows
// with whatever else the proxy and its machine are doing.
func TestLargeReplyOutlivesTimeout(t *testing.T) {
	t.Parallel()
	// A pause a tenth of the timeout: the fake server runs in the test's
	// process, which a busy machine starves with the proxy, so a pause
	// much nearer the timeout would be a server's silence. The timeout is
	// a second stretched by how busy the machine is: at load 15-30 on two
	// cores a second once passed between two pieces 100 ms apart, and the
	// reply failed at 1.3 s. The reply still takes over three timeouts.
	timeout := time.Duration(realprog.Busy() * float64(time.Second)).Round(time.Millisecond)
	pause := timeout / 10
	const value, piece = 8 << 20, 512 << 10
	for _, stop := range []bool{false, true} {
		t.Run(fmt.Sprint("stops midway ", stop), func(t *testing.T) {
			t.Parallel()
			addr := fakeServer(t, func(c net.Conn) {
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					var n int
					if _, err := fmt.Sscanf(line, "*%d", &n); err != nil {
						continue
					}
					for range 2 * n { // the request's arguments, read and dropped
						if _, err := r.ReadString('\n'); err != nil {
							return
						}
					}
					// The reply: an array of two values, sent a piece at a
					// time, the whole taking 32 pauses, over 3 timeouts.
					reply := fmt.Appendf(nil, "*2\r\n$%d\r\n", value)
					reply = append(reply, bytes.Repeat([]byte("v"), value)...)
					reply = fmt.Appendf(reply, "\r\n$%d\r\n", value)
					reply = append(reply, bytes.Repeat([]byte("w"), value)...)
					reply = append(reply, "\r\n"...)
					for i := 0; len(reply) > 0; i++ {
						if stop && i == 16 {
							<-t.Context().Done() // stops until the test ends
							return
						}
						k := min(len(reply), piece)
						if _, err := c.Write(reply[:k]); err != nil {
							return
						}
						reply = reply[k:]
						time.Sleep(pause)
					}
				}
			})
			s := startProxy(t, "p:\n  listen: 127.0.0.1:0\n  redis: true\n  timeout: "+fmt.Sprint(timeout.Milliseconds())+
				"\n  servers: [\""+addr+":1 r0\"]\n")
			c := dialRedis(t, s.Addr("p").String())
			c.guard = 30 * timeout // the reply takes 3.2 timeouts; dialRedis's minute is less on a busy machine
			start := time.Now()
			got := c.do("MGET", "kkk-0", "kkk-1")
			took := time.Since(start)
			if stop {
				if got != "-ERR Connection timed out\r\n" {
					t.Errorf("a reply stopped midway: %.40q, want nutcracker's timeout", got)
				}
				return
			}
			want := fmt.Sprintf("*2\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", value, strings.Repeat("v", value), value, strings.Repeat("w", value))
			if got != want {
				t.Errorf("MGET of 2 values of 8 MB sent over %v with a %v timeout: %.60q (%d bytes)", took.Round(time.Millisecond), timeout, got, len(got))
			}
		})
	}
}
