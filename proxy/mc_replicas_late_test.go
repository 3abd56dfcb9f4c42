package proxy

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestReplicaReturnOutlivesALateWrite: a write the proxy gave up on at its
// timeout is still in the server's socket (a server stalled holds what was
// sent to it; a busy machine may run that connection's requests after
// others), and the server runs it when it next reads that connection -
// possibly after its return settled the key. Here a copy b is held (the
// relay holds what the proxy sends it), v2 is written (b times out and is
// marked down; its other copy x takes v2), a change moves x's copy to an
// added server and v3 is written there; b answers probes again, and only
// then is v2 delivered to it. b must not serve v2: it is older than v3
// (TestReplicasReturnSettlesFromACopyOfNow failed once so at load 14-28 on
// 2 cores: "m1 holds v2 ... once back, older than v3").
func TestReplicaReturnOutlivesALateWrite(t *testing.T) {
	t.Parallel()
	ms := make([]*memcached, 5)
	relays := make([]*lateRelay, 5)
	for i := range ms {
		ms[i] = startMemcached(t, 0)
		relays[i] = newLateRelay(t, ms[i].addr)
	}
	yaml := func(n int) string {
		var b strings.Builder
		b.WriteString("p:\n  listen: 127.0.0.1:0\n  distribution: ring\n  replicas: 2\n  ejection: fail-fast\n  timeout: 300\n" +
			"  server_failure_limit: 1\n  health_check: {interval: 50, timeout: 300}\n  servers:\n")
		for i, r := range relays[:n] {
			fmt.Fprintf(&b, "   - %s:1 m%d\n", r.ln.Addr(), i)
		}
		return b.String()
	}
	key, b, x := keyKeepingOneCopy(t, yaml)
	bi := int(b[1] - '0')
	s, logs := startProxyLogged(t, yaml(4))
	c := dial(t, s.Addr("p").String())
	setValue(c, key, "v1", 0, 0)
	relays[bi].hold()
	setValue(c, key, "v2", 0, 0) // to x; b times out holding it and is marked down
	reload(t, s, yaml(5))
	setValue(c, key, "v3", 0, 0) // to m4; b is down
	relays[bi].passNew()         // b answers its probes; v2 is still held
	down := s.testPool("p").backendNamed(b)
	eventually(t, b+" restored, or its return put off", func() bool {
		if !down.health.isDown() {
			return true
		}
		for _, l := range logs.lines(t, "server not restored yet") {
			if l["server"] == b {
				return true
			}
		}
		return false
	})
	relays[bi].release() // v2 reaches b now
	eventually(t, b+" restored", func() bool { return !down.health.isDown() })
	eventually(t, "v2 run at "+b, func() bool { return cmdSets(t, ms[bi].addr) >= 2 })
	if it, ok := dialDirect(t, ms[bi]).get(key); ok && it.value != "v3" {
		t.Errorf("%s holds %q for %s once back, older than v3 (v2 is on %s and reached %s late)", b, it.value, key, x, b)
	}
	if got := getValue(c, key); got != "" && got != "v3" {
		t.Errorf("get %s once %s is back: %q, want v3 or a miss", key, b, got)
	}
}

// cmdSets returns the number of sets the memcached at addr ran.
func cmdSets(t *testing.T, addr string) int {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(conn, "stats\r\n")
	r := bufio.NewReader(conn)
	n := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == "END\r\n" {
			return n
		}
		if f := strings.Fields(line); len(f) == 3 && f[1] == "cmd_set" {
			n, _ = strconv.Atoi(f[2])
		}
	}
}
