package kolco_test

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/kolco-dev/kolco"

// floors places every package of the module on a floor. A package may
// import packages on its own floor or below, never above, so that the
// library stays usable without the faces built on it. The longest
// matching prefix decides; a package that matches none has no floor and
// fails TestFloors until it is given one here.
var floors = []struct {
	prefix string // a directory relative to the module root; "x/" covers x's subdirectories
	floor  int
}{
	// 0: the root vocabulary.
	{".", 0},
	// 1: key hashing and small internal helpers.
	{"keyhash", 1}, {"internal/crc16", 1}, {"internal/bytestr", 1}, {"internal/mix", 1}, {"internal/suggest", 1},
	{"internal/jumpbackhash", 1},
	{"internal/continuum", 1}, {"internal/realprog", 1}, {"internal/testproc", 1}, {"internal/metadump", 1},
	{"internal/storecheck", 1}, {"internal/redisscan", 1}, {"internal/resp", 1}, {"internal/tlstest", 1},
	// 2: the algorithms with their shared engine, the registry, the
	// property suite, the node file format.
	{"ring", 2}, {"modulo", 2}, {"slots", 2}, {"rendezvous", 2}, {"jump", 2}, {"jumpback", 2},
	{"maglev", 2}, {"multiprobe", 2}, {"anchor", 2}, {"bounded", 2}, {"flip", 2}, {"binomial", 2},
	{"power", 2}, {"dx", 2}, {"jumpbackanchor", 2},
	{"internal/nodeset", 2}, {"internal/memento", 2}, {"algo", 2}, {"kolcotest", 2}, {"nodefile", 2},
	// 3: compatibility with other systems: its foundation, the systems,
	// the registry.
	{"compat", 3}, {"compat/", 3},
	// 4: measurement, membership, and what the processes of a fleet say
	// to each other.
	{"sim", 4}, {"sim/", 4}, {"chart", 4}, {"membership", 4}, {"membership/", 4}, {"membership/gossip", 4}, {"fleet", 4},
	// 5: the faces, and the fault schedules that run them as processes.
	{"cmd/", 5}, {"proxy", 5}, {"proxy/", 5}, {"adapter/", 5}, {"internal/faults", 5},
}

// floorOf returns the floor of the package in dir (slash-separated,
// relative to the module root), or -1 when no rule covers it.
func floorOf(dir string) int {
	best, floor := -1, -1
	for _, f := range floors {
		match := dir == f.prefix || strings.HasSuffix(f.prefix, "/") && strings.HasPrefix(dir, f.prefix)
		if match && len(f.prefix) > best {
			best, floor = len(f.prefix), f.floor
		}
	}
	return floor
}

// TestFloors fails when a package imports one on a higher floor, or when
// a package has no floor. Test files are left out: a test may use what it
// needs to check its package.
func TestFloors(t *testing.T) {
	for _, v := range floorViolations(moduleImports(t)) {
		t.Error(v)
	}
}

// TestFloorViolations checks that the rule reports what it must: an import
// that runs upward and a package without a floor, and nothing else.
func TestFloorViolations(t *testing.T) {
	got := floorViolations(map[string][]string{
		"ring":             {".", "keyhash", "proxy"},
		"compat/twemproxy": {"internal/continuum", "ring"},
		"cmd/kolco":        {"proxy", "sim"},
		"no/such/package":  nil,
	})
	want := []string{
		"no/such/package has no floor: place it in floors_test.go",
		"ring (floor 2) imports proxy (floor 5)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// floorViolations lists, in package order, each package without a floor
// and each import that runs to a higher floor.
func floorViolations(imports map[string][]string) []string {
	dirs := make([]string, 0, len(imports))
	for dir := range imports {
		dirs = append(dirs, dir)
	}
	slices.Sort(dirs)
	var out []string
	for _, dir := range dirs {
		floor := floorOf(dir)
		if floor < 0 {
			out = append(out, dir+" has no floor: place it in floors_test.go")
			continue
		}
		for _, imp := range imports[dir] {
			if f := floorOf(imp); f > floor {
				out = append(out, fmt.Sprintf("%s (floor %d) imports %s (floor %d)", dir, floor, imp, f))
			}
		}
	}
	return out
}

// moduleImports returns, for each package directory of the main module
// (bench is a module of its own), the module's packages its non-test files
// import, as directories relative to the module root.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "bench") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(p))
		if _, ok := out[dir]; !ok {
			out[dir] = nil
		}
		for _, spec := range f.Imports {
			imp, _ := strconv.Unquote(spec.Path.Value)
			if rel, ok := strings.CutPrefix(imp, module+"/"); ok {
				out[dir] = append(out[dir], rel)
			} else if imp == module {
				out[dir] = append(out[dir], ".")
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path.Join("proxy", "doc.go")); err != nil || len(out) < 10 {
		t.Fatalf("the walk found %d packages; run the test from the module root", len(out))
	}
	return out
}
