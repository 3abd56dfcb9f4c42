package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/internal/testproc"
)

// TestMain fails the tests when a program they started outlives them
// (testproc.Main).
func TestMain(m *testing.M) { os.Exit(testproc.Main(m.Run)) }

// TestTables: the tables start as the article's first one does, and the
// JSON holds the same figures.
func TestTables(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run(nil, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	if !strings.HasPrefix(out.String(), "hash % N, 1000000 keys user:0..:\n 10 -> 11  moved 90.87%") {
		t.Errorf("the tables start %q", out.String()[:min(80, out.Len())])
	}
	out.Reset()
	if code := run([]string{"-json"}, &out, &errs); code != 0 {
		t.Fatalf("-json: exit %d: %s", code, errs.String())
	}
	var v map[string]any
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || len(v) == 0 {
		t.Errorf("-json printed no figures: %v", err)
	}
}

// TestUsageErrors: a flag or an argument it does not take is a usage
// error, exit 2.
func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"-nope"}, {"extra"}} {
		var out, errs bytes.Buffer
		if code := run(args, &out, &errs); code != 2 || errs.Len() == 0 || out.Len() != 0 {
			t.Errorf("%q: exit %d, stderr %q, stdout %q", args, code, errs.String(), out.String())
		}
	}
}

// TestBuildStaysLight: the program links the simulator and the standard
// library's few, and none of what makes the kolco command slow to build.
func TestBuildStaysLight(t *testing.T) {
	out, err := testproc.Output(exec.Command("go", "list", "-deps", "."))
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, heavy := range []string{"github.com/spf13/", "go.etcd.io/", "google.golang.org/", "gonum.org/", "github.com/prometheus/", "/proxy", "/membership", "/chart", "yaml"} {
			if strings.Contains(dep, heavy) {
				t.Errorf("kolco-article depends on %s", dep)
			}
		}
	}
}

// TestReadmeFirstCommands: the README's first command block is the two
// commands a newcomer needs, this program and the tests, and the module it
// tells them to depend on is this module.
func TestReadmeFirstCommands(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	start := strings.Index(text, "```sh\n")
	if start < 0 {
		t.Fatal("the README has no shell block")
	}
	block := text[start+len("```sh\n"):]
	block = block[:strings.Index(block, "```")]
	var commands []string
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		commands = append(commands, strings.Join(strings.Fields(line), " "))
	}
	want := []string{"go run ./cmd/kolco-article", "go test ./..."}
	if strings.Join(commands, "\n") != strings.Join(want, "\n") {
		t.Errorf("the README's first commands are %q, want %q", commands, want)
	}
	module := strings.Fields(strings.SplitN(string(gomod), "\n", 2)[0])[1]
	if !strings.Contains(text, "go get "+module+"@latest") {
		t.Errorf("the README does not say `go get %s@latest`", module)
	}
}
