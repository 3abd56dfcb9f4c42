package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckFailsOnTheFilesItNames: --check exits 1 on a state file the
// start would refuse and on a membership file the pool could not follow,
// naming the file, where it exited 0 and the start then failed.
func TestCheckFailsOnTheFilesItNames(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "nutcracker.yml")
	members := filepath.Join(dir, "members.yml")
	y := "p:\n  listen: 127.0.0.1:22999\n  distribution: jump\n  servers: [\"127.0.0.1:11211:1 a\"]\n" +
		"q:\n  listen: 127.0.0.1:22998\n  distribution: ring\n  servers: [\"127.0.0.1:11211:1 a\"]\n  membership: {file: {path: members.yml, pool: q}}\n"
	for _, f := range []struct{ path, content string }{{conf, y}, {members, "q:\n  servers: [\"127.0.0.1:11211:1 a\"]\n"}} {
		if err := os.WriteFile(f.path, []byte(f.content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if code, _, errs := runCLI(t, "", "proxy", "--check", "--config", conf); code != 0 {
		t.Fatalf("good files: exit %d: %s", code, errs)
	}
	if err := os.WriteFile(conf+".kolco-state", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCLI(t, "", "proxy", "--check", "--config", conf); code != 1 || !strings.Contains(errs, conf+".kolco-state") || !strings.Contains(errs, "empty") {
		t.Errorf("an empty state file: exit %d: %s", code, errs)
	}
	if err := os.Remove(conf + ".kolco-state"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(members, []byte(": x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCLI(t, "", "proxy", "--check", "--config", conf); code != 1 || !strings.Contains(errs, members) || !strings.Contains(errs, "yaml") {
		t.Errorf("a membership file that is no YAML: exit %d: %s", code, errs)
	}
}
