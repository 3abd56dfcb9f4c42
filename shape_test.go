package kolco_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// Size limits that keep each file and function readable in one sitting.
const (
	maxFileLines = 500
	maxFuncLines = 80
)

// TestShape fails for a Go file of code (not of tests) over maxFileLines
// lines, and for a function over maxFuncLines lines, not counting the lines of its composite literals
// (test tables, help texts) and leaving out cobra command definitions,
// whose length is their help text and flags.
func TestShape(t *testing.T) {
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
		for _, problem := range shapeProblems(fset, f) {
			t.Errorf("%s: %s", p, problem)
		}
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
		{"long test function", "x_test.go", "package p\nfunc TestF() {\n\tx := 0\n" + long + "\t_ = x\n}\n", 1},
		{"short function with a long table", "x.go", "package p\nfunc f() {\n" + table + "}\n", 0},
		{"cobra command", "x.go", "package p\nfunc newCmd() *cobra.Command {\n\tx := 0\n" + long + "\t_ = x\n\treturn nil\n}\n", 0},
		{"long file", "x.go", "package p\n" + strings.Repeat("var _ = 1\n", maxFileLines), 1},
		{"long test file", "x_test.go", "package p\n" + strings.Repeat("var _ = 1\n", maxFileLines), 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, c.file, c.src, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := shapeProblems(fset, f); len(got) != c.want {
				t.Errorf("got %d problems %q, want %d", len(got), got, c.want)
			}
		})
	}
}

func shapeProblems(fset *token.FileSet, f *ast.File) []string {
	var out []string
	// Tests are held to the function limit only: a file of tests is
	// split by the behaviour it tests, not by length, so that one
	// behaviour's tests read in one place.
	file := fset.File(f.Pos())
	if n := file.LineCount(); n > maxFileLines && !strings.HasSuffix(file.Name(), "_test.go") {
		out = append(out, fmt.Sprintf("%d lines, more than %d: split it by concern", n, maxFileLines))
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil || isCobraCommand(fd) {
			continue
		}
		if n := funcLines(fset, fd); n > maxFuncLines {
			out = append(out, fmt.Sprintf("func %s has %d lines outside literals, more than %d", fd.Name.Name, n, maxFuncLines))
		}
	}
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
