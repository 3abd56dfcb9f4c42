package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/fleet"
	"github.com/kolco-dev/kolco/internal/realprog"
)

// adminProxy serves a one-pool configuration with the admin endpoint on,
// placing by distribution over servers, and returns the admin address.
func adminProxy(t *testing.T, distribution string, servers ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "nutcracker.yml")
	y := "kolco:\n  admin_listen: 127.0.0.1:0\np:\n  listen: 127.0.0.1:0\n  distribution: " + distribution + "\n  servers:\n"
	for i, s := range servers {
		y += fmt.Sprintf("   - %s:1 s%d\n", s, i)
	}
	if err := os.WriteFile(path, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	return serveProxy(t, path, -1).AdminAddr().String()
}

// TestStatusNamesTheProxyThatDiffers: of three proxies, the one placing
// over other servers is named, with its fingerprint; the exit status is 1.
func TestStatusNamesTheProxyThatDiffers(t *testing.T) {
	a, b := startMemcached(t), startMemcached(t)
	same1, same2 := adminProxy(t, "ring", a, b), adminProxy(t, "ring", a, b)
	other := adminProxy(t, "ring", a)
	code, out, errs := runCLI(t, "", "status", "--proxy", same1+","+other, "--proxy", same2)
	if code != 1 || !strings.Contains(out, "pool p: the proxies DO NOT AGREE: 2 of 3") || !hasLine(out, other, "differs: fingerprint") ||
		hasLine(out, same1, "differs") || !strings.Contains(errs, `pool "p": the proxies do not agree`) {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}

	code, out, errs = runCLI(t, "", "status", "--proxy", same1, "--proxy", other, "--proxy", same2, "--json")
	var verdicts []poolAgreement
	if err := json.Unmarshal([]byte(out), &verdicts); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if code != 1 || len(verdicts) != 1 {
		t.Fatalf("--json: exit %d %+v %s", code, verdicts, errs)
	}
	v := verdicts[0]
	if v.Agree || len(v.Agreeing) != 2 || len(v.Differing) != 1 || v.Differing[0].Proxy != other || v.Since == nil ||
		time.Since(*v.Since) < 0 {
		t.Errorf("--json verdict %+v", v)
	}

	if code, out, errs := runCLI(t, "", "status", "--proxy", same1, "--proxy", same2); code != 0 || !strings.Contains(out, "all 2 proxies agree") {
		t.Errorf("two alike: exit %d\n%s%s", code, out, errs)
	}
	// A proxy given twice, under two addresses, is one proxy.
	again := "localhost:" + same2[strings.LastIndexByte(same2, ':')+1:]
	if code, out, errs := runCLI(t, "", "status", "--proxy", same1, "--proxy", same2, "--proxy", again); code != 0 ||
		!strings.Contains(out, "all 2 proxies agree") || !hasLine(out, again+" is "+same2, "(counted once)") {
		t.Errorf("one proxy given twice: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := runCLI(t, "", "status", "--proxy", same1); code != 0 || strings.Contains(out, "1 proxies") || !strings.Contains(out, "1 proxy") {
		t.Errorf("one proxy: exit %d\n%s%s", code, out, errs)
	}
	if code, out, _ := runCLI(t, "", "status", "--proxy", same1, "--pool", "nosuch"); code != 1 || !hasLine(out, same1, `runs no pool "nosuch"`) {
		t.Errorf("an unknown pool: exit %d\n%s", code, out)
	}
}

// TestStatusUsage: a status without proxies, or with a bad timeout, is a
// usage error; one whose proxies all fail to answer is a failure.
func TestStatusUsage(t *testing.T) {
	for _, args := range [][]string{{"status"}, {"status", "--proxy", "127.0.0.1:1", "--timeout", "0s"}, {"status", "--proxy"}} {
		if code, _, errs := runCLI(t, "", args...); code != 2 || errs == "" {
			t.Errorf("%v: exit %d, %q; want a usage error", args, code, errs)
		}
	}
	refused := fmt.Sprintf("127.0.0.1:%d", realprog.FreePorts(t, 1)[0]) // closed again: nothing listens there
	if code, _, errs := runCLI(t, "", "status", "--proxy", refused); code != 1 || !strings.Contains(errs, "no proxy answered") {
		t.Errorf("no proxy answering: exit %d, %q", code, errs)
	}
}

// getJSON decodes the JSON answer to GET url into v.
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// hasLine reports whether a line of out holds each of parts.
func hasLine(out string, parts ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(line, p) }) {
			return true
		}
	}
	return false
}

// TestStatusStaleAndUnknown: when every proxy is stale (their membership
// file stopped parsing), status exits 1 and says so; when a proxy does not
// answer, it says the agreement is unknown - never also that the proxies
// do not agree - and names every pool at fault.
func TestStatusStaleAndUnknown(t *testing.T) {
	m := startMemcached(t)
	dir := t.TempDir()
	members := filepath.Join(dir, "members.yml")
	if err := os.WriteFile(members, []byte("p:\n  servers: [\""+m+":1 a\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var admins []string
	for i := range 2 {
		path := filepath.Join(dir, fmt.Sprintf("p%d.yml", i))
		y := "kolco:\n  admin_listen: 127.0.0.1:0\n"
		for _, pool := range []string{"p", "q"} {
			y += pool + fmt.Sprintf(":\n  listen: 127.0.0.1:%d\n", realprog.FreePorts(t, 1)[0]) + "  distribution: ring\n  servers: [\"" + m + ":1 a\"]\n" +
				"  membership: {file: {path: " + members + ", pool: p, interval: 20, settle: 40}}\n"
		}
		if err := os.WriteFile(path, []byte(y), 0o600); err != nil {
			t.Fatal(err)
		}
		admins = append(admins, serveProxy(t, path, -1).AdminAddr().String())
	}
	eventually(t, "the proxies in step with the file", func() bool {
		code, _, _ := runCLI(t, "", "status", "--proxy", admins[0], "--proxy", admins[1])
		return code == 0
	})
	if err := os.WriteFile(members, []byte("p:\n  servers: [\""+m+":x a\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var code int
	var out, errs string
	eventually(t, "both proxies stale", func() bool {
		code, out, errs = runCLI(t, "", "status", "--proxy", admins[0], "--proxy", admins[1])
		return strings.Count(out, "are stale") == 2
	})
	if code != 1 || !strings.Contains(errs, `pool "p": every proxy is stale`) || !strings.Contains(errs, `pool "q": every proxy is stale`) {
		t.Errorf("all stale: exit %d\n%s%s", code, out, errs)
	}
	// Why each is stale, as its /v1/membership says: the file's error.
	var ms []fleet.PoolStatus
	getJSON(t, "http://"+admins[0]+"/v1/membership", &ms)
	if len(ms) == 0 || ms[0].Error == "" {
		t.Fatalf("/v1/membership: %+v, want the pools stale with an error", ms)
	}
	if !hasLine(out, admins[0], "stale: its view may be behind its membership source (it still places as shown): "+ms[0].Error) ||
		!strings.Contains(errs, ms[0].Error) {
		t.Errorf("all stale: the reason %q not given:\n%s%s", ms[0].Error, out, errs)
	}

	refused := fmt.Sprintf("127.0.0.1:%d", realprog.FreePorts(t, 1)[0])
	code, out, errs = runCLI(t, "", "status", "--proxy", admins[0], "--proxy", refused)
	if code != 1 || !strings.Contains(out, "agreement unknown") || strings.Contains(out+errs, "do not agree") ||
		!strings.Contains(errs, `pool "p": agreement unknown`) || !strings.Contains(errs, `pool "q": agreement unknown`) {
		t.Errorf("one not answering: exit %d\n%s%s", code, out, errs)
	}
}
