package proxy

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kolco-dev/kolco/internal/tlstest"
)

// TestVerifyingConfigFollowsTheAuthority: the one TLS configuration a
// membership source dials with verifies each peer against the authority
// file as read last: a peer another authority signed is refused until
// the file names that authority, and accepted after, with no new
// configuration; a peer whose certificate is for another name is
// refused.
func TestVerifyingConfigFollowsTheAuthority(t *testing.T) {
	dir := t.TempDir()
	first, second := tlstest.NewCA(t, dir, "first"), tlstest.NewCA(t, dir, "second")
	caFile := filepath.Join(dir, "ca.pem")
	copyFile(t, first.CertFile, caFile)
	files := &certFiles{caFile: caFile}
	if _, err := files.reload(time.Now()); err != nil {
		t.Fatal(err)
	}
	cfg := files.verifyingConfig("")
	bySecond := tlsPeer(t, second.Issue(t, "peer-second", tlstest.Options{}))
	dial := func(addr, name string) error {
		c := cfg.Clone()
		c.ServerName = name
		conn, err := tls.Dial("tcp", addr, c)
		if err == nil {
			conn.Close()
		}
		return err
	}
	if err := dial(tlsPeer(t, first.Issue(t, "peer-first", tlstest.Options{})), "127.0.0.1"); err != nil {
		t.Errorf("a peer the authority signed: %v", err)
	}
	if err := dial(bySecond, "127.0.0.1"); err == nil {
		t.Error("a peer another authority signed was accepted")
	}
	copyFile(t, second.CertFile, caFile)
	later := time.Now().Add(time.Second)
	if err := os.Chtimes(caFile, later, later); err != nil {
		t.Fatal(err)
	}
	if changed, err := files.reload(time.Now()); !changed || err != nil {
		t.Fatalf("reload of the authority: %v %v", changed, err)
	}
	if err := dial(bySecond, "127.0.0.1"); err != nil {
		t.Errorf("after the authority file changed to its authority: %v", err)
	}
	if err := dial(bySecond, "sentinel.example"); err == nil {
		t.Error("a peer's certificate for other names was accepted for sentinel.example")
	}
}

func copyFile(t *testing.T, from, to string) {
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// tlsPeer serves TLS with pair on 127.0.0.1 until the test ends: each
// connection is closed after its handshake.
func tlsPeer(t *testing.T, pair tlstest.Pair) string {
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair.Load(t)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()
	return l.Addr().String()
}
