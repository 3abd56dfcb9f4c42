package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/internal/realprog"
	"github.com/kolco-dev/kolco/internal/tlstest"
)

// TestStatusOverHTTPS: kolco status asks a proxy whose admin endpoint
// serves https (kolco.admin_tls) with --ca-file, and says why it cannot
// without it.
func TestStatusOverHTTPS(t *testing.T) {
	dir := t.TempDir()
	ca := tlstest.NewCA(t, dir, "admin")
	cert := ca.Issue(t, "proxy", tlstest.Options{})
	ports := realprog.FreePorts(t, 2)
	conf := filepath.Join(dir, "nutcracker.yml")
	y := fmt.Sprintf("kolco:\n  admin_listen: 127.0.0.1:%d\n  admin_tls: {cert_file: %s, key_file: %s}\np:\n  listen: 127.0.0.1:%d\n  distribution: ring\n  servers: [\"%s:1 a\"]\n",
		ports[0], cert.CertFile, cert.KeyFile, ports[1], startMemcached(t))
	if err := os.WriteFile(conf, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	startProxy(t, conf)
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	code, out, errs := runCLI(t, "", "status", "--proxy", addr, "--ca-file", ca.CertFile)
	if code != 0 || !strings.Contains(out, "pool p") {
		t.Errorf("with --ca-file: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = runCLI(t, "", "status", "--proxy", "https://"+addr)
	if code == 0 || !strings.Contains(out+errs, "certificate signed by unknown authority") {
		t.Errorf("without --ca-file: exit %d\n%s%s", code, out, errs)
	}
	if code, _, errs = runCLI(t, "", "status", "--proxy", addr, "--cert-file", cert.CertFile); code != 2 || !strings.Contains(errs, "go together") {
		t.Errorf("--cert-file alone: exit %d %s", code, errs)
	}
}
