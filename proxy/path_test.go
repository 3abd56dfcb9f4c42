package proxy

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco/internal/testproc"
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
	case "redis-store-moving":
		storeMovingSets(t, count)
	default:
		t.Fatalf("kind %q", kind)
	}
}

// storeMovingSets sends count SETs, each of a key a store's move has yet
// to move: four servers get a fifth, with the mover held by store.hours,
// so that each SET moves its key first.
func storeMovingSets(t *testing.T, count int) {
	rs := []*redisServer{startRedis(t, 0), startRedis(t, 0), startRedis(t, 0), startRedis(t, 0), startRedis(t, 0)}
	later := laterHours()
	s := startProxy(t, storeHoursYAML(rs[:4], later))
	c := dialRedis(t, s.Addr("p").String())
	keys := testKeys("path", 6000) // as many for every count: the fill is not per SET
	pipeline(t, c, len(keys), func(i int) []string { return []string{"SET", keys[i], "v"} })
	before := routeNames(s.testPool("p"), keys)
	reload(t, s, storeHoursYAML(rs, later))
	after := routeNames(s.testPool("p"), keys)
	sent := 0
	for i, k := range keys {
		if sent == count {
			return
		}
		if before[i] != after[i] {
			if got := c.do("SET", k, "w"); got != "+OK\r\n" {
				t.Fatalf("SET %s: %q", k, got)
			}
			sent++
		}
	}
	t.Fatalf("%d of %d keys move: want %d", sent, len(keys), count)
}

// maxPathFiles is the most files of the package a traced request may run:
// a reader of the page follows a request through at most that many.
const maxPathFiles = 8

// The paths docs/architecture.md traces, by the heading of each, the load
// of TestRequestPathLoad that runs it, and the most files it may run.
var tracedPaths = []struct {
	heading, load string
	most          int
}{
	{"### A memcached get", "memcached", maxPathFiles},
	{"### A Redis GET", "redis", maxPathFiles},
	{"### A Redis SET of a key a store's move has yet to move", "redis-store-moving", maxPathFiles},
}

// traceStep is a row of a traced path: a file, its wing, and the
// functions the request runs there, as "Type.method" or "function".
type traceStep struct {
	wing, file string
	funcs      []string
}

var (
	traceRow  = regexp.MustCompile("^\\| *\\d+ *\\| *(\\w+) *\\| *`([a-z_]+\\.go)` *\\|(.*)\\|$")
	traceFunc = regexp.MustCompile("`([A-Za-z_][A-Za-z0-9_]*(?:\\.[A-Za-z_][A-Za-z0-9_]*)?)`")
)

// readTrace returns the steps of the path under heading in the document.
func readTrace(t *testing.T, doc, heading string) []traceStep {
	_, rest, ok := strings.Cut(doc, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("docs/architecture.md has no %q", heading)
	}
	var steps []traceStep
	for _, line := range strings.Split(rest, "\n") {
		if strings.HasPrefix(line, "#") {
			break
		}
		m := traceRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		st := traceStep{wing: m[1], file: m[2]}
		for _, f := range traceFunc.FindAllStringSubmatch(m[3], -1) {
			st.funcs = append(st.funcs, f[1])
		}
		steps = append(steps, st)
	}
	if len(steps) == 0 {
		t.Fatalf("docs/architecture.md: no steps under %q", heading)
	}
	return steps
}

// declarations returns what each non-test file of the package declares:
// its functions by name and its methods as "Type.method", and the types.
func declarations(t *testing.T) (byFile map[string][]string, types map[string]bool) {
	byFile, types = map[string][]string{}, map[string]bool{}
	names, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				name := d.Name.Name
				if d.Recv != nil {
					typ := d.Recv.List[0].Type
					if st, ok := typ.(*ast.StarExpr); ok {
						typ = st.X
					}
					if id, ok := typ.(*ast.Ident); ok {
						name = id.Name + "." + name
					}
				}
				byFile[fset.Position(d.Pos()).Filename] = append(byFile[fset.Position(d.Pos()).Filename], name)
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					if ts, ok := sp.(*ast.TypeSpec); ok {
						types[ts.Name.Name] = true
					}
				}
			}
		}
	}
	return byFile, types
}

// traceWing returns the wing the document names a file's by: the
// engine's by the prefix of the file's name (pool, place, backend,
// migration, io), a Redis store's move (redis_store_*.go) as store, a part
// of the redis wing beside its front as the engine's parts are parts, the
// others' by their wing.
func traceWing(file string) string {
	if strings.HasPrefix(file, "redis_store") {
		return "store"
	}
	if w := wingOf(file); w != "engine" {
		return w
	}
	i := strings.IndexAny(file, "_.")
	return file[:i]
}

// TestArchitectureTrace holds the paths docs/architecture.md traces to the
// code: each function of the package it names is declared in the file it
// names, a wing has at most two files on a path, no file comes twice, and
// a path has at most the files tracedPaths allows it.
func TestArchitectureTrace(t *testing.T) {
	b, err := os.ReadFile("../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	byFile, types := declarations(t)
	for _, p := range tracedPaths {
		t.Run(p.load, func(t *testing.T) {
			files := map[string]bool{}
			perWing := map[string]int{}
			steps := readTrace(t, string(b), p.heading)
			if len(steps) > p.most {
				t.Errorf("%d files, over %d", len(steps), p.most)
			}
			for _, st := range steps {
				if files[st.file] {
					t.Errorf("%s comes twice", st.file)
				}
				files[st.file] = true
				if perWing[st.wing]++; perWing[st.wing] > 2 {
					t.Errorf("wing %s has a third file, %s", st.wing, st.file)
				}
				if w := traceWing(st.file); w != st.wing {
					t.Errorf("%s is in wing %s, not %s", st.file, w, st.wing)
				}
				for _, f := range st.funcs {
					typ, _, method := strings.Cut(f, ".")
					if method && !types[typ] {
						continue // another package's: memcache.Reader, twemproxy's Pool.Index
					}
					if !slices.Contains(byFile[st.file], f) {
						t.Errorf("%s: %s is not declared there", st.file, f)
					}
				}
			}
		})
	}
}

// TestRequestPathFiles measures the files of the package a memcached get,
// a Redis GET and a SET of a key a store's move has yet to move run, by
// statement counts, and fails unless they are the files
// docs/architecture.md traces, at most as many as tracedPaths allows.
func TestRequestPathFiles(t *testing.T) {
	if os.Getenv("KOLCO_REQUEST_PATH") == "" {
		t.Skip("set KOLCO_REQUEST_PATH=1 to measure the files a request runs")
	}
	b, err := os.ReadFile("../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range tracedPaths {
		var want []string
		for _, st := range readTrace(t, string(b), p.heading) {
			want = append(want, st.file)
		}
		slices.Sort(want)
		got := perRequestFiles(t, p.load, 200, 600)
		t.Logf("%s: %d files: %s", p.load, len(got), strings.Join(got, " "))
		if len(got) > p.most {
			t.Errorf("%s runs %d files, over %d", p.load, len(got), p.most)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s runs %v; docs/architecture.md traces %v", p.load, got, want)
		}
	}
}

// perRequestFiles returns the files with a statement that ran at least
// once per request more with more requests, lo and hi of them.
func perRequestFiles(t *testing.T, kind string, lo, hi int) []string {
	counts := func(n int) map[string]int {
		out := t.TempDir() + "/cover.out"
		cmd := exec.Command("go", "test", "-count=1", "-run", "^TestRequestPathLoad$", "-covermode=count", "-coverprofile="+out, ".")
		cmd.Env = append(os.Environ(), fmt.Sprintf("KOLCO_PATH_LOAD=%s:%d", kind, n))
		if b, err := testproc.CombinedOutput(cmd); err != nil {
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
