package main

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/kolco-dev/kolco/algo"
)

// The repository's README and docs pages are read as a user reads them:
// every command line they show must name commands and flags that exist,
// every example's output must be what the command prints, and the figures
// they quote must be the ones the quoted commands print.

func readmeText(t *testing.T) string {
	t.Helper()
	return repoText(t, "README.md")
}

// repoText returns the text of a file of the repository, by its path from
// the repository's root.
func repoText(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The docs pages whose figures the tests below check.
const (
	algorithmsPage = "docs/algorithms.md" // the algorithms table
	commandPage    = "docs/command.md"    // the plan examples
)

// fencedBlocks returns the lines of every fenced code block whose info string
// is lang.
func fencedBlocks(text, lang string) [][]string {
	var blocks [][]string
	var cur []string
	in := false
	for _, line := range strings.Split(text, "\n") {
		switch {
		case !in && line == "```"+lang:
			in, cur = true, nil
		case in && line == "```":
			in = false
			blocks = append(blocks, cur)
		case in:
			cur = append(cur, line)
		}
	}
	return blocks
}

// kolcoInvocations returns the argument lists of the kolco commands in a
// shell block: continuation lines joined, comments dropped, and of each
// pipeline stage that runs kolco (as `kolco` or `go run ./cmd/kolco`) the
// words after the program, up to a redirection.
func kolcoInvocations(block []string) [][]string {
	var lines []string
	pending := ""
	for _, l := range block {
		if strings.HasSuffix(l, `\`) {
			pending += strings.TrimSuffix(l, `\`) + " "
			continue
		}
		lines = append(lines, pending+l)
		pending = ""
	}
	var out [][]string
	for _, l := range lines {
		l = strings.TrimPrefix(l, "$ ")
		if i := strings.Index(l, " #"); i >= 0 {
			l = l[:i]
		}
		for _, stage := range strings.Split(l, "|") {
			words := strings.Fields(stage)
			switch {
			case len(words) >= 3 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/kolco":
				words = words[3:]
			case len(words) >= 1 && words[0] == "kolco":
				words = words[1:]
			default:
				continue
			}
			for i, w := range words {
				if w == "<" || w == ">" || strings.HasPrefix(w, ">") || strings.HasPrefix(w, "<") {
					words = words[:i]
					break
				}
			}
			out = append(out, words)
		}
	}
	return out
}

func TestReadmeCommandLinesParse(t *testing.T) {
	text := readmeText(t)
	n := 0
	for _, block := range fencedBlocks(text, "sh") {
		for _, args := range kolcoInvocations(block) {
			n++
			if err := parseCommandLine(args); err != nil {
				t.Errorf("kolco %s: %v", strings.Join(args, " "), err)
			}
		}
	}
	if n < 5 {
		t.Fatalf("found %d kolco command lines in the README; the parser is missing some", n)
	}
}

// parseCommandLine finds the command args name and parses its flags and
// arguments as kolco would, without running it.
func parseCommandLine(args []string) error {
	root := newRootCmd()
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if cmd == root || !cmd.Runnable() {
		return errors.New("names no runnable command")
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return err
	}
	return cmd.ValidateArgs(cmd.Flags().Args())
}

// shellVar is a shell variable set on a line of its own: NAME="value".
var shellVar = regexp.MustCompile(`^([A-Z_]+)="([^"]*)"$`)

// TestDocsCommandLinesParse: the kolco command lines of the docs pages'
// shell, console and plain blocks (with the variables a block sets
// expanded) name commands and flags that exist.
func TestDocsCommandLinesParse(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join("..", "..", "proxy", "README.md"))
	n := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, block := range codeBlocks(string(b), "", "sh", "console") {
			vars := map[string]string{}
			for i, line := range block {
				if m := shellVar.FindStringSubmatch(line); m != nil {
					vars[m[1]] = m[2]
				}
				for name, value := range vars {
					block[i] = strings.ReplaceAll(block[i], "$"+name, value)
				}
			}
			for _, args := range kolcoInvocations(block) {
				n++
				if err := parseCommandLine(args); err != nil {
					t.Errorf("%s: kolco %s: %v", filepath.ToSlash(strings.TrimPrefix(page, filepath.Join("..", "..")+string(filepath.Separator))), strings.Join(args, " "), err)
				}
			}
		}
	}
	if n < 40 {
		t.Fatalf("found %d kolco command lines in the docs pages; the parser is missing some", n)
	}
}

// codeBlocks returns the lines of every fenced code block whose info
// string is one of langs, telling each fence that closes a block from one
// that opens one, whatever the block's language.
func codeBlocks(text string, langs ...string) [][]string {
	var blocks [][]string
	var cur []string
	in, keep := false, false
	for _, line := range strings.Split(text, "\n") {
		switch {
		case !in && strings.HasPrefix(line, "```"):
			in, keep, cur = true, slices.Contains(langs, strings.TrimPrefix(line, "```")), nil
		case in && line == "```":
			in = false
			if keep {
				blocks = append(blocks, cur)
			}
		case in:
			cur = append(cur, line)
		}
	}
	return blocks
}

// readmeExample is one `$ printf '...' | go run ./cmd/kolco ...` line of the
// README with the output shown under it.
type readmeExample struct {
	stdin string
	args  []string
	want  string
}

var printfExample = regexp.MustCompile(`^\$ printf '([^']*)' \| go run \./cmd/kolco (.*)$`)

func readmeExamples(t *testing.T, text string) []readmeExample {
	t.Helper()
	var examples []readmeExample
	for _, block := range fencedBlocks(text, "sh") {
		first := len(examples) // examples of this block
		for _, line := range block {
			if m := printfExample.FindStringSubmatch(line); m != nil {
				stdin := strings.ReplaceAll(m[1], `\n`, "\n")
				examples = append(examples, readmeExample{stdin: stdin, args: strings.Fields(m[2])})
				continue
			}
			if strings.HasPrefix(line, "$ ") {
				t.Fatalf("README example %q is not in the form this test runs", line)
			}
			if len(examples) > first {
				examples[len(examples)-1].want += line + "\n"
			}
		}
	}
	return examples
}

func TestReadmeExamplesPrintWhatTheyShow(t *testing.T) {
	examples := readmeExamples(t, readmeText(t))
	if len(examples) < 2 {
		t.Fatalf("found %d examples with output in the README", len(examples))
	}
	for _, ex := range examples {
		code, out, errs := runCLI(t, ex.stdin, ex.args...)
		if code != 0 || out != ex.want {
			t.Errorf("kolco %s: exit %d, stderr %q\nprinted:\n%s\nREADME shows:\n%s",
				strings.Join(ex.args, " "), code, errs, out, ex.want)
		}
	}
}

// TestReadmeMovedColumn runs the command the algorithms page names for its
// algorithms table's "moved 10→11" column and compares each row with the
// average moved share it prints.
func TestReadmeMovedColumn(t *testing.T) {
	text := repoText(t, algorithmsPage)
	m := regexp.MustCompile("Moved shares as `([^`]*)`").FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("%s does not name the command behind its moved column", algorithmsPage)
	}
	args := strings.Fields(m[1])
	if len(args) < 2 || args[0] != "kolco" {
		t.Fatalf("command %q does not run kolco", m[1])
	}
	code, out, errs := runCLI(t, "", args[1:]...)
	if code != 0 {
		t.Fatalf("%s: exit %d: %s", m[1], code, errs)
	}
	measured := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || !strings.HasSuffix(f[3], "%") {
			continue
		}
		name, _, _ := strings.Cut(f[0], "(")
		measured[name] = f[3] // setup, theory, min, avg, ...
	}
	rows := 0
	for _, line := range strings.Split(text, "\n") {
		if strings.Count(line, "|") != 8 || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		name := strings.Trim(strings.TrimSpace(cells[0]), "`")
		got := strings.TrimSpace(cells[len(cells)-1])
		rows++
		if want, ok := measured[name]; !ok {
			t.Errorf("%s row %s: %s does not measure it", algorithmsPage, name, m[1])
		} else if got != want {
			t.Errorf("%s row %s says %s moved; %s prints %s", algorithmsPage, name, got, m[1], want)
		}
	}
	if want := len(algo.Names()); rows != want {
		t.Errorf("found %d rows in the algorithms table, want one for each of the %d algorithms", rows, want)
	}
}

// TestReadmePlanFigures runs the plan examples of the command's page and
// checks the figures its text quotes from their theory column.
func TestReadmePlanFigures(t *testing.T) {
	text := repoText(t, commandPage)
	dir := t.TempDir()
	ten := filepath.Join(dir, "ten.txt")
	var names strings.Builder
	for i := 0; i <= 9; i++ {
		names.WriteString("node-" + string(rune('0'+i)) + "\n")
	}
	if err := os.WriteFile(ten, []byte(names.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	outputs := map[string]string{} // the algorithm and cost flags -> output
	for _, block := range fencedBlocks(text, "sh") {
		if len(block) == 0 || !strings.HasPrefix(block[0], "seq -f 'node-%g' 0 9 > ten.txt") {
			continue
		}
		for _, args := range kolcoInvocations(block) {
			for i, a := range args {
				if a == "ten.txt" {
					args[i] = ten
				}
			}
			code, out, errs := runCLI(t, "", args...)
			if code != 0 {
				t.Fatalf("kolco %s: exit %d: %s", strings.Join(args, " "), code, errs)
			}
			outputs[strings.Join(args, " ")] = out
		}
	}
	if len(outputs) != 4 {
		t.Fatalf("found %d plan examples, want 4", len(outputs))
	}
	// Each claim: the page's words, the example's distinguishing flags, the
	// output row and the theory cell it must show.
	claims := []struct{ phrase, algo, flag, row, theory string }{
		{"91 364 database RPS", "modulo", "--rps", "database RPS, right after", "91364"},
		{"18.3x steady, for `% N`", "modulo", "--rps", "factor over steady", "18.3x"},
		{"13 636 RPS, 2.7x,\nfor a ring", "ring", "--rps", "database RPS, right after", "13636"},
		{"13 636 RPS, 2.7x,\nfor a ring", "ring", "--rps", "factor over steady", "2.7x"},
		{"2.7 TB sent for `% N`", "modulo", "--data", "bytes moved", "2.7 TB"},
		{"272.7 GB (27.3 GB per old\nnode) for a ring", "", "--data", "bytes moved", "272.7 GB"},
		{"272.7 GB (27.3 GB per old\nnode) for a ring", "", "--data", "bytes sent per old node", "27.3 GB"},
	}
	for _, c := range claims {
		if !strings.Contains(text, c.phrase) {
			t.Errorf("%s no longer says %q", commandPage, c.phrase)
			continue
		}
		found := false
		for cmdline, out := range outputs {
			if !strings.Contains(cmdline, c.flag) || (c.algo != "") != strings.Contains(cmdline, "--algo "+c.algo) {
				continue
			}
			found = true
			if cell := theoryCell(out, c.row); cell != c.theory {
				t.Errorf("kolco %s: %q theory is %q; %s says %s", cmdline, c.row, cell, commandPage, c.theory)
			}
		}
		if !found {
			t.Errorf("no plan example of %s backs %q", commandPage, c.phrase)
		}
	}
}

// theoryCell returns the last column of the summary row named row.
func theoryCell(out, row string) string {
	for _, line := range strings.Split(out, "\n") {
		trimmed := strings.TrimSpace(line)
		if !strings.HasPrefix(trimmed, row+"  ") {
			continue
		}
		cols := regexp.MustCompile(`\s{2,}`).Split(trimmed, -1)
		return cols[len(cols)-1]
	}
	return ""
}

// TestReadmePaperYears: where a command's help or an algorithm's summary
// cites a paper of the algorithms table (docs/algorithms.md) with a year,
// it gives the year the table gives (it may give another beside it, such
// as the year the paper appeared at a conference).
func TestReadmePaperYears(t *testing.T) {
	texts := map[string]string{} // where -> text
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		texts[c.CommandPath()+" --help"] = c.Short + "\n" + c.Long
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
	for _, info := range algo.All() {
		texts["algorithm "+info.Name] = info.Summary
	}
	year := regexp.MustCompile(`\b(19|20)\d\d\b`)
	cited := 0
	for _, line := range strings.Split(repoText(t, algorithmsPage), "\n") {
		if strings.Count(line, "|") != 8 || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(line, "|")
		name, paper := strings.Trim(cells[1], " `"), cells[2]
		for _, part := range strings.Split(paper, "+") {
			words := strings.Fields(part)
			years := year.FindAllString(part, -1)
			if len(words) == 0 || len(years) == 0 {
				continue
			}
			author := strings.Trim(words[0], ",")
			for where, text := range texts {
				if alg, ok := strings.CutPrefix(where, "algorithm "); ok && alg != name {
					continue // an algorithm's summary cites its own paper; one author may have several
				}
				for _, at := range regexp.MustCompile(regexp.QuoteMeta(author)).FindAllStringIndex(text, -1) {
					// The citation runs to its closing parenthesis.
					rest := strings.ReplaceAll(text[at[1]:], "\n", " ")
					if end := strings.IndexAny(rest, ")"); end >= 0 {
						rest = rest[:end]
					}
					given := year.FindAllString(rest, -1)
					if len(given) == 0 {
						continue
					}
					cited++
					for _, y := range years {
						if !slices.Contains(given, y) {
							t.Errorf("%s cites %s %s; the table of %s says %s", where, author, strings.Join(given, ", "), algorithmsPage, strings.Join(years, ", "))
						}
					}
				}
			}
		}
	}
	if cited < 10 {
		t.Errorf("found %d citations with a year in the help and the summaries; the test is reading too little", cited)
	}
}
