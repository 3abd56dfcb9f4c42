package main

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/testproc"
)

// TestProxyMovePauseHolds: "kolco proxy move pause" pauses a store's
// mover, and the pause holds through a kill -9 and a start of the proxy
// (the state file records it) and through a change that comes before the
// move ended: no key leaves the servers the mover goes through meanwhile.
// "resume" lets the move end, every key on its server, and "status" says
// so.
func TestProxyMovePauseHolds(t *testing.T) {
	t.Parallel()
	p := newStoreProc(t, "")
	p.write(4)
	p.start()
	keys := fill(t, p.addr(), 6000)
	p.reload(5)
	p.moving()
	admin := fmt.Sprintf("127.0.0.1:%d", p.admin)
	move := func(action string) string {
		t.Helper()
		code, out, errs := runCLI(t, "", "proxy", "move", action, "rd", "--proxy", admin)
		if code != 0 {
			t.Fatalf("move %s: exit %d: %s", action, code, errs)
		}
		return out
	}
	if out := move("pause"); !strings.Contains(out, "rd: paused") {
		t.Fatalf("pause: %q", out)
	}
	if data, err := os.ReadFile(p.conf + ".kolco-state"); err != nil || !strings.Contains(string(data), `"move_paused": true`) {
		t.Fatalf("the state file after the pause: %s %v", data, err)
	}
	newest := dialRaw(t, p.redis[4])
	held := newest.do("DBSIZE")
	if err := testproc.KillOwn(p.currentPid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.exited
	p.start()
	if out := move("status"); !strings.HasPrefix(out, "rd: paused") {
		t.Errorf("status after the restart: %q", out)
	}
	// A change before the move ended: the move now follows both earlier
	// placements, still paused.
	p.reload(4)
	out := move("status")
	for deadline := time.Now().Add(20 * time.Second); strings.HasPrefix(out, "rd: waiting") && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		out = move("status")
	}
	if !strings.HasPrefix(out, "rd: paused") {
		t.Errorf("status after a change: %q", out)
	}
	time.Sleep(time.Second) // what a mover let go would move meanwhile
	if got := newest.do("DBSIZE"); got != held {
		t.Errorf("the fifth server held %q at the pause and %q after a restart and a change: the mover moved keys while paused", held, got)
	}
	// Moving or waiting; or, with the keys left moved by then (a busy
	// machine), the move just ended.
	if out := move("resume"); !strings.HasPrefix(out, "rd: moving") && !strings.HasPrefix(out, "rd: waiting") &&
		!strings.HasPrefix(out, "rd: no move under way; the last ended") {
		t.Errorf("resume: %q", out)
	}
	p.moved()
	if out := move("status"); !strings.Contains(out, "no move under way; the last ended") {
		t.Errorf("status after the move: %q", out)
	}
	p.checkPlaced(keys, true)
}

// TestProxyMoveRefusesBadInput: a move command without its pool, with an
// action it does not know, or without the proxy's address fails with a
// clear error, and so does a plan given both --move-rate and
// --move-rate-from.
func TestProxyMoveRefusesBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"proxy", "move", "pause"}, "want two arguments"},
		{[]string{"proxy", "move", "stop", "rd", "--proxy", "127.0.0.1:1"}, "want pause, resume or status"},
		{[]string{"proxy", "move", "status", "rd"}, "--proxy ADDR is required"},
		{[]string{"plan", "--nodes", "a,b", "--add", "c", "--move-rate", "100", "--move-rate-from", "127.0.0.1:1"}, "give one"},
	} {
		code, _, errs := runCLI(t, "", c.args...)
		if code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want an error saying %q", c.args, code, errs, c.want)
		}
	}
}
