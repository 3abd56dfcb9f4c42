package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/testproc"
)

// browser is a headless Chromium driven through chromedriver's WebDriver
// protocol, plain JSON over HTTP.
type browser struct {
	t       *testing.T
	base    string // http://127.0.0.1:port/session/ID
	hc      *http.Client
	session string
}

// startBrowser starts chromedriver and a headless Chromium session that
// records the page's console, script errors included; Cleanup ends both.
func startBrowser(t *testing.T) *browser {
	t.Helper()
	driver := realprog.Binary(t, "chromium-driver", "chromedriver")
	chromium := realprog.Binary(t, "chromium", "chromium")
	port := realprog.FreePorts(t, 1)[0]
	cmd := exec.Command(driver, fmt.Sprintf("--port=%d", port), "--allowed-ips=127.0.0.1")
	if err := testproc.Start(cmd); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	realprog.WaitListening(t, "chromedriver", []int{port}, exited)
	b := &browser{t: t, base: fmt.Sprintf("http://127.0.0.1:%d/session", port), hc: &http.Client{Timeout: 60 * time.Second}}
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName": "chrome",
		"goog:chromeOptions": map[string]any{"binary": chromium, "args": []string{
			"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
			"--user-data-dir=" + t.TempDir()}},
		"goog:loggingPrefs": map[string]string{"browser": "ALL"},
	}}}
	var created struct{ SessionID string }
	b.call("POST", "", caps, &created)
	if created.SessionID == "" {
		t.Fatal("chromedriver made no session")
	}
	b.session = created.SessionID
	b.base += "/" + created.SessionID
	t.Cleanup(func() { b.call("DELETE", "", nil, nil) })
	return b
}

// call sends a WebDriver command and decodes its value into v.
func (b *browser) call(method, path string, body, v any) {
	b.t.Helper()
	var in io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			b.t.Fatal(err)
		}
		in = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, b.base+path, in)
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.hc.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b.t.Fatalf("webdriver %s %s: %s: %s", method, path, resp.Status, data)
	}
	if v == nil {
		return
	}
	var out struct{ Value json.RawMessage }
	if err := json.Unmarshal(data, &out); err != nil {
		b.t.Fatal(err)
	}
	if err := json.Unmarshal(out.Value, v); err != nil {
		b.t.Fatalf("webdriver %s %s: %v: %s", method, path, err, out.Value)
	}
}

// open loads url and waits for the page to load.
func (b *browser) open(url string) { b.call("POST", "/url", map[string]string{"url": url}, nil) }

// eval runs script in the page and decodes what it returns into v.
func (b *browser) eval(script string, v any) {
	b.call("POST", "/execute/sync", map[string]any{"script": script, "args": []any{}}, v)
}

// consoleEntry is a line of the page's console.
type consoleEntry struct {
	Level   string
	Message string
}

// console returns the console lines since the last call: script errors
// are among them at level SEVERE.
func (b *browser) console() []consoleEntry {
	var entries []consoleEntry
	b.call("POST", "/se/log", map[string]string{"type": "browser"}, &entries)
	return entries
}
