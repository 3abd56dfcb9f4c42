package proxy

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kolco-dev/kolco/internal/testproc"
)

// The package's files are its map: each belongs to a wing by its name's
// prefix, and a wing may use only what the wings below it declare, as
// floors_test.go holds the module's packages to their floors. The rule is
// read off the code by the type checker: every identifier a file uses
// that another file of the package declares (a type, function, method,
// field, constant or variable) must come from the file's own wing or one
// it may use. So the engine names neither protocol, the two fronts never
// reach into each other, and only each front imports its codec.
var wings = []struct {
	prefix string // a file name, or the start of one
	wing   string
}{
	{"doc.go", "doc"},
	{"errors.go", "config"}, {"config", "config"},
	// The engine: pools, their clients' requests and budgets (pool_),
	// placement and routing (place_), servers and their connections
	// (backend_), changes' windows (migration_), and the sockets' raw
	// system calls with their portable twin (io_).
	{"pool", "engine"}, {"place", "engine"}, {"backend", "engine"}, {"migration", "engine"}, {"io_", "engine"},
	{"mc_", "memcached"}, {"redis_", "redis"},
	{"source", "source"},
	{"admin", "admin"},
	{"server_fronts.go", "fronts"}, {"server", "server"},
}

// mayUse lists the wings each wing may use besides its own.
var mayUse = map[string][]string{
	"doc":       nil,
	"config":    nil,
	"engine":    {"config"},
	"memcached": {"config", "engine"},
	"redis":     {"config", "engine"},
	"source":    {"config", "engine"},
	// What an operator sees: the admin endpoint, status page, stats port
	// and metrics read the running server.
	"admin":  {"config", "engine", "source", "server"},
	"server": {"config", "engine", "source", "admin", "fronts"},
	// The one place that names the fronts, to pick a pool's.
	"fronts": {"config", "engine", "memcached", "redis"},
}

// codecs are the protocol packages, and the wings that may import each.
var codecs = map[string][]string{
	module + "/proxy/memcache": {"memcached"},
	// The file format knows Redis's largest value, a pool's default.
	module + "/proxy/redis": {"redis", "config"},
}

const module = "github.com/kolco-dev/kolco"

// wingOf returns the wing of a file of the package by its name, or "".
func wingOf(file string) string {
	best, wing := -1, ""
	for _, w := range wings {
		if strings.HasPrefix(file, w.prefix) && len(w.prefix) > best {
			best, wing = len(w.prefix), w.wing
		}
	}
	return wing
}

// TestWings holds the package's files to the wings' rules.
func TestWings(t *testing.T) {
	t.Parallel()
	for _, v := range wingViolations(t, nil) {
		t.Error(v)
	}
}

// TestWingsCatchViolations: a planted engine file that names the
// memcached front and imports Redis's codec, and a file of no wing, are
// reported, each for what it does.
func TestWingsCatchViolations(t *testing.T) {
	t.Parallel()
	got := wingViolations(t, map[string]string{
		"pool_planted.go": `package proxy

import "github.com/kolco-dev/kolco/proxy/redis"

var plantedFront front = memcacheFront{}

var plantedCommands = redis.NumCommands
`,
		"planted.go": "package proxy\n",
	})
	want := []string{
		"planted.go has no wing: name it for one (see wings_test.go)",
		"pool_planted.go (engine) imports " + module + "/proxy/redis",
		"pool_planted.go (engine) uses memcacheFront of mc_front.go (memcached)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// wingViolations type-checks the package's files, with extra files added
// by name, and returns what breaks the wings' rules, sorted.
func wingViolations(t *testing.T, extra map[string]string) []string {
	t.Helper()
	fset := token.NewFileSet()
	var files []*ast.File
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		if ok, err := build.Default.MatchFile(".", name); err != nil || !ok {
			continue // another platform's, or a build tag's twin
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	for name, src := range extra {
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: exportImporter(t, fset)}
	pkg, err := conf.Check(module+"/proxy", fset, files, info)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		name := fset.Position(f.Pos()).Filename
		if wingOf(name) == "" {
			out = append(out, fmt.Sprintf("%s has no wing: name it for one (see wings_test.go)", name))
			continue
		}
		for _, imp := range f.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			if allowed, ok := codecs[path]; ok && !slices.Contains(allowed, wingOf(name)) {
				out = append(out, fmt.Sprintf("%s (%s) imports %s", name, wingOf(name), path))
			}
		}
	}
	seen := map[string]bool{}
	for id, obj := range info.Uses {
		if obj.Pkg() != pkg || !obj.Pos().IsValid() {
			continue
		}
		user, owner := fset.Position(id.Pos()).Filename, fset.Position(obj.Pos()).Filename
		uw, ow := wingOf(user), wingOf(owner)
		if uw == "" || uw == ow || slices.Contains(mayUse[uw], ow) {
			continue
		}
		v := fmt.Sprintf("%s (%s) uses %s of %s (%s)", user, uw, obj.Name(), owner, ow)
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// exportImporter returns an importer that reads the packages the proxy
// imports from the export data the go command builds for them.
func exportImporter(t *testing.T, fset *token.FileSet) types.Importer {
	t.Helper()
	exports, err := exportFiles()
	if err != nil {
		t.Fatal(err)
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
}

// exportFiles maps the packages the proxy imports to their export data,
// asked of the go command once for every test that type-checks: it builds
// them, which takes most of such a test's time.
var exportFiles = sync.OnceValues(func() (map[string]string, error) {
	out, err := testproc.Output(exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", "."))
	if err != nil {
		return nil, fmt.Errorf("go list -export: %w", err)
	}
	exports := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, file, ok := strings.Cut(line, "\t"); ok && file != "" {
			exports[path] = file
		}
	}
	return exports, nil
})
