package proxy

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The request paths docs/architecture.md traces are checked two ways:
// TestArchitectureTrace holds the document to the code (each function it
// names is in the file it names, at most two files per wing, no file
// visited twice), and TestRequestPathFiles, run by hand with
// KOLCO_REQUEST_PATH=1, measures which files a request runs: it serves
// gets twice, 200 and 600 of them, with statement counts
// (-covermode=count), and lists the files with a statement that ran once
// more per request in the second run than in the first.

// TestRequestPathLoad serves KOLCO_PATH_LOAD=kind:n requests of one kind
// (memcached, a get; redis, a GET) through a proxy over real servers.
func TestRequestPathLoad(t *testing.T) {
	kind, n, ok := strings.Cut(os.Getenv("KOLCO_PATH_LOAD"), ":")
	if !ok {
		t.Skip("set KOLCO_PATH_LOAD=memcached:N or redis:N (see TestRequestPathFiles)")
	}
	count, err := strconv.Atoi(n)
	if err != nil {
		t.Fatal(err)
	}
	switch kind {
	case "memcached":
		ms := []*memcached{startMemcached(t, freePort(t)), startMemcached(t, freePort(t))}
		s := startProxy(t, poolYAML("", ms...))
		c := dial(t, s.Addr("p").String())
		c.do("set k 0 0 1\r\nv\r\n")
		for range count {
			if got := c.do("get k\r\n"); got != "VALUE k 0 1\r\nv\r\nEND\r\n" {
				t.Fatalf("get: %q", got)
			}
		}
	case "redis":
		rs := []*redisServer{startRedis(t, freePort(t)), startRedis(t, freePort(t))}
		s := startProxy(t, redisPoolYAML("", rs...))
		c := dialRedis(t, s.Addr("p").String())
		c.do("SET", "k", "v")
		for range count {
			if got := c.do("GET", "k"); got != "$1\r\nv\r\n" {
				t.Fatalf("GET: %q", got)
			}
		}
	default:
		t.Fatalf("kind %q", kind)
	}
}

// TestRequestPathFiles lists the files of the package a memcached get and
// a Redis GET run, as measured by statement counts.
func TestRequestPathFiles(t *testing.T) {
	if os.Getenv("KOLCO_REQUEST_PATH") == "" {
		t.Skip("set KOLCO_REQUEST_PATH=1 to measure the files a request runs")
	}
	for _, kind := range []string{"memcached", "redis"} {
		files := perRequestFiles(t, kind, 200, 600)
		t.Logf("%s: %s", kind, strings.Join(files, " "))
	}
}

// perRequestFiles returns the files with a statement that ran at least
// once per request more with more requests, lo and hi of them.
func perRequestFiles(t *testing.T, kind string, lo, hi int) []string {
	counts := func(n int) map[string]int {
		out := t.TempDir() + "/cover.out"
		cmd := exec.Command("go", "test", "-count=1", "-run", "^TestRequestPathLoad$", "-covermode=count", "-coverprofile="+out, ".")
		cmd.Env = append(os.Environ(), fmt.Sprintf("KOLCO_PATH_LOAD=%s:%d", kind, n))
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", cmd, err, b)
		}
		f, err := os.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		blocks := map[string]int{}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) != 3 {
				continue // the mode line
			}
			c, _ := strconv.Atoi(fields[2])
			blocks[fields[0]] += c
		}
		return blocks
	}
	a, b := counts(lo), counts(hi)
	var files []string
	for block, n := range b {
		if n-a[block] < hi-lo {
			continue
		}
		file := block[strings.LastIndex(block, "/")+1 : strings.IndexByte(block, ':')]
		if !strings.Contains(block, "/proxy/memcache/") && !strings.Contains(block, "/proxy/redis/") && !slices.Contains(files, file) {
			files = append(files, file)
		}
	}
	slices.Sort(files)
	return files
}
