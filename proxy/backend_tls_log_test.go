package proxy

import (
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/tlstest"
)

// TestRefusedTLSFileLoggedOnce: a certificate file that does not load is
// refused once per change of the file, not at every check while it stays
// (it was logged every second); a second bad version is refused again,
// and the good one back is said to be in use.
func TestRefusedTLSFileLoggedOnce(t *testing.T) {
	dir := t.TempDir()
	pair := tlstest.NewCA(t, dir, "test").Issue(t, "localhost", tlstest.Options{})
	var reg certRegistry
	if _, err := reg.get(pair.CertFile, pair.KeyFile, ""); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(pair.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	const refused = "TLS files not reloaded: the ones in use stay; said again only when the files change"
	const reloaded = "TLS files reloaded"
	checks := func(n int) {
		for range n {
			reg.reloadAll(log) // what the watch does every second
		}
	}
	write := func(data []byte, mtime time.Time) {
		if err := os.WriteFile(pair.CertFile, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(pair.CertFile, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Now().Add(time.Hour)
	write([]byte("not a certificate"), t0)
	checks(5)
	if n := len(logs.lines(t, refused)); n != 1 {
		t.Errorf("a bad file checked 5 times: %d refusals logged, want 1", n)
	}
	write([]byte("still not a certificate"), t0.Add(time.Second))
	checks(5)
	if n := len(logs.lines(t, refused)); n != 2 {
		t.Errorf("a second bad version: %d refusals logged in all, want 2", n)
	}
	if err := os.Remove(pair.CertFile); err != nil {
		t.Fatal(err)
	}
	checks(5)
	if n := len(logs.lines(t, refused)); n != 3 {
		t.Errorf("the file gone: %d refusals logged in all, want 3", n)
	}
	write(good, t0.Add(2*time.Second))
	checks(5)
	if n, r := len(logs.lines(t, refused)), len(logs.lines(t, reloaded)); n != 3 || r != 1 {
		t.Errorf("the good file back: %d refusals, %d reloads logged; want 3 and 1", n, r)
	}
}
