package kolco_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Size limits that keep each file, function and type readable in one
// sitting.
const (
	maxFileLines = 500
	maxFuncLines = 60
	// maxTestFuncLines holds a test function: a test's setup reads top to
	// bottom, and the tests still past 60 lines are split as they are
	// reorganised by behaviour.
	maxTestFuncLines = 80
	maxMethods       = 30
)

// funcLimits are the functions past maxFuncLines, each held at its length
// until it is split: the store's mover loop, rewritten as a whole.
var funcLimits = map[string]int{}

// methodLimits are the types past maxMethods, each held at the methods it
// has until it is cut into the parts it holds (a sweep's, an outage's, a
// store move's state; listeners, handover, TLS material): "dir.Type" to
// its most methods, those of test files included.
var methodLimits = map[string]int{}

// TestShape fails for a Go file of code (not of tests) over maxFileLines
// lines, and for a function over maxFuncLines lines, not counting the lines of its composite literals
// (test tables, help texts) and leaving out cobra command definitions,
// whose length is their help text and flags.
func TestShape(t *testing.T) {
	eachGoFile(t, func(p string, fset *token.FileSet, f *ast.File) {
		for _, problem := range shapeProblems(fset, f, p) {
			t.Errorf("%s: %s", p, problem)
		}
	})
}

// eachGoFile calls fn with each Go file of the module, parsed, but for
// those under testdata and hidden folders.
func eachGoFile(t *testing.T, fn func(path string, fset *token.FileSet, f *ast.File)) {
	t.Helper()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		fn(p, fset, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestShapeProblems checks that the limits are enforced, and that tables,
// cobra commands and long test files are let through.
func TestShapeProblems(t *testing.T) {
	long := strings.Repeat("\tx++\n", maxFuncLines)
	table := "\t_ = []int{\n" + strings.Repeat("\t\t1,\n", maxFuncLines) + "\t}\n"
	for _, c := range []struct {
		name, file, src string
		want            int
	}{
		{"long function", "x.go", "package p\nfunc f() {\n\tx := 0\n" + long + "\t_ = x\n}\n", 1},
		{"short function with a long table", "x.go", "package p\nfunc f() {\n" + table + "}\n", 0},
		{"cobra command", "x.go", "package p\nfunc newCmd() *cobra.Command {\n\tx := 0\n" + long + "\t_ = x\n\treturn nil\n}\n", 0},
		{"long file", "x.go", "package p\n" + strings.Repeat("var _ = 1\n", maxFileLines), 1},
		{"long test file", "x_test.go", "package p\n" + strings.Repeat("var _ = 1\n", maxFileLines), 0},
		{"function one line past the limit", "x.go", "package p\nfunc f() {\n" + strings.Repeat("\tx++\n", maxFuncLines-1) + "}\n", 1},
		{"function at the limit", "x.go", "package p\nfunc f() {\n" + strings.Repeat("\tx++\n", maxFuncLines-2) + "}\n", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, c.file, c.src, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := shapeProblems(fset, f, c.file); len(got) != c.want {
				t.Errorf("got %d problems %q, want %d", len(got), got, c.want)
			}
		})
	}
}

// shapeProblems returns what breaks the limits in f, the file at path.
func shapeProblems(fset *token.FileSet, f *ast.File, path string) []string {
	var out []string
	// Tests are held to the function limit only: a file of tests is split
	// by the behaviour it tests, not by length, so that one behaviour's
	// tests read in one place.
	if n := fset.File(f.Pos()).LineCount(); n > maxFileLines && !strings.HasSuffix(path, "_test.go") {
		out = append(out, fmt.Sprintf("%d lines, more than %d: split it by concern", n, maxFileLines))
	}
	limit := maxFuncLines
	if strings.HasSuffix(path, "_test.go") {
		limit = maxTestFuncLines
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil || isCobraCommand(fd) {
			continue
		}
		most := limit
		if n, ok := funcLimits[filepath.ToSlash(path)+" "+fd.Name.Name]; ok {
			most = n
		}
		if n := funcLines(fset, fd); n > most {
			out = append(out, fmt.Sprintf("func %s has %d lines outside literals, more than %d", fd.Name.Name, n, most))
		}
	}
	return out
}

// TestShapeMethods fails for a type with more than maxMethods methods (or
// its limit in methodLimits), counted over the files of its folder.
func TestShapeMethods(t *testing.T) {
	counts := map[string]int{}
	eachGoFile(t, func(p string, _ *token.FileSet, f *ast.File) {
		countMethods(counts, filepath.ToSlash(filepath.Dir(p)), f)
	})
	for _, problem := range methodProblems(counts) {
		t.Error(problem)
	}
}

// TestShapeMethodProblems checks that a type past the limit is reported,
// and one at it is not.
func TestShapeMethodProblems(t *testing.T) {
	methods := func(n int) string {
		var b strings.Builder
		b.WriteString("package p\ntype T struct{}\n")
		for i := range n {
			fmt.Fprintf(&b, "func (T) m%d() {}\n", i)
		}
		return b.String()
	}
	for _, c := range []struct {
		name string
		n    int
		want int
	}{{"at the limit", maxMethods, 0}, {"one past the limit", maxMethods + 1, 1}} {
		t.Run(c.name, func(t *testing.T) {
			f, err := parser.ParseFile(token.NewFileSet(), "x.go", methods(c.n), 0)
			if err != nil {
				t.Fatal(err)
			}
			counts := map[string]int{}
			countMethods(counts, "planted", f)
			if got := methodProblems(counts); len(got) != c.want {
				t.Errorf("got %d problems %q, want %d", len(got), got, c.want)
			}
		})
	}
}

// countMethods adds the methods f declares to counts, by "dir.Type".
func countMethods(counts map[string]int, dir string, f *ast.File) {
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv == nil || len(fd.Recv.List) == 0 {
			continue
		}
		typ := fd.Recv.List[0].Type
		if star, ok := typ.(*ast.StarExpr); ok {
			typ = star.X
		}
		switch x := typ.(type) {
		case *ast.IndexExpr:
			typ = x.X
		case *ast.IndexListExpr:
			typ = x.X
		}
		if id, ok := typ.(*ast.Ident); ok {
			counts[dir+"."+id.Name]++
		}
	}
}

// methodProblems returns the types of counts past their limits, sorted.
func methodProblems(counts map[string]int) []string {
	var out []string
	for typ, n := range counts {
		most := maxMethods
		if m, ok := methodLimits[typ]; ok {
			most = m
		}
		if n > most {
			out = append(out, fmt.Sprintf("type %s has %d methods, more than %d: cut it into the parts it holds", typ, n, most))
		}
	}
	slices.Sort(out)
	return out
}

// isCobraCommand reports whether fd returns a *cobra.Command.
func isCobraCommand(fd *ast.FuncDecl) bool {
	if fd.Type.Results == nil {
		return false
	}
	for _, r := range fd.Type.Results.List {
		if star, ok := r.Type.(*ast.StarExpr); ok {
			if sel, ok := star.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "Command" {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "cobra" {
					return true
				}
			}
		}
	}
	return false
}

// funcLines counts the lines of fd that are not inside a composite
// literal of more than one line (each such literal counts as one line).
func funcLines(fset *token.FileSet, fd *ast.FuncDecl) int {
	line := func(p token.Pos) int { return fset.Position(p).Line }
	n := line(fd.End()) - line(fd.Pos()) + 1
	ast.Inspect(fd.Body, func(node ast.Node) bool {
		if lit, ok := node.(*ast.CompositeLit); ok {
			n -= line(lit.End()) - line(lit.Pos())
			return false
		}
		return true
	})
	return n
}
