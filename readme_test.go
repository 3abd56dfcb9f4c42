package kolco_test

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"unicode"
)

// The front page and the docs are read as a reader follows them: README.md
// fits a screen or two and links every page of docs/; every relative link
// of every Markdown file reaches a file, and every #anchor a heading of it,
// by GitHub's rules; and a docs page longer than a screen opens with its
// contents.

const (
	// readmeMaxLines is the front page's length: what kolco is, how to
	// install it, the two commands, a quick start per face, and links.
	readmeMaxLines = 250
	// contentsPast is the length past which a docs page opens with a list
	// of its sections: a reader no longer sees the page whole.
	contentsPast = 60
)

// A docProblem is one thing wrong with the docs: what, in which file.
type docProblem struct {
	file, kind, detail string
}

func (p docProblem) String() string { return p.file + ": " + p.kind + ": " + p.detail }

// The kinds of docProblem.
const (
	tooLong       = "longer than the front page may be"
	pageUnlinked  = "a docs page the README does not link"
	fileMissing   = "a link to a file that does not exist"
	anchorMissing = "a link to a heading that does not exist"
	noContents    = "a long page whose contents list lacks a section"
)

// TestReadmeDocsLinks checks the repository's own pages: README.md at most
// readmeMaxLines lines and linking every docs/*.md, every relative link
// and anchor of every Markdown file resolving, and every docs page past
// contentsPast lines opening with its contents.
func TestReadmeDocsLinks(t *testing.T) {
	problems, err := checkDocs(os.DirFS("."))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestReadmeDocsCheckFindsBreaks holds checkDocs to what it is for: a
// sound set of pages passes, and each break planted in it is found.
func TestReadmeDocsCheckFindsBreaks(t *testing.T) {
	long := strings.Repeat("text\n", contentsPast)
	sound := fstest.MapFS{
		"README.md": {Data: []byte("# kolco\n\n[Algorithms](docs/algorithms.md), [the command](docs/command.md#the-kolco-command-locate-and-plan)\n" +
			"![a chart](docs/chart.png) [go](https://go.dev/) [a file](go.mod) [here](#kolco)\n" +
			"```sh\n[not a link](nowhere.md)\n## not a heading\n```\n`[code](nowhere.md)`\n")},
		"go.mod":         {Data: []byte("module x\n")},
		"docs/chart.png": {Data: []byte("png")},
		"docs/algorithms.md": {Data: []byte("# Algorithms\n\n- [The ring](#the-ring)\n- [kolco's `jump`, again](#kolcos-jump-again)\n" +
			"- [The ring, twice](#the-ring-1)\n\n## The ring\n" + long + "## kolco's `jump`, again\n\n## The ring\n\nsee [the command](command.md#plan-a-change)\n" +
			"and [the bench][bench].\n\n[bench]: ../go.mod\n")},
		"docs/command.md": {Data: []byte("# The `kolco` command: [locate](../go.mod) and plan\n\n### Plan a change\n\n[back](../README.md)\n")},
	}
	if problems, err := checkDocs(sound); err != nil || len(problems) > 0 {
		t.Fatalf("a sound set of pages: %v, %v", problems, err)
	}
	for _, tc := range []struct {
		name, file, old, new, kind string
	}{
		{"front page too long", "README.md", "# kolco\n", "# kolco\n" + strings.Repeat("\n", readmeMaxLines), tooLong},
		{"page not linked", "README.md", "[Algorithms](docs/algorithms.md), ", "", pageUnlinked},
		{"file missing", "docs/command.md", "(../README.md)", "(../READ.md)", fileMissing},
		{"file missing, relative to the page", "docs/algorithms.md", "(command.md#", "(docs/command.md#", fileMissing},
		{"image missing", "README.md", "(docs/chart.png)", "(docs/chart.svg)", fileMissing},
		{"reference link's file missing", "docs/algorithms.md", "[bench]: ../go.mod", "[bench]: ../go.sum", fileMissing},
		{"anchor missing", "README.md", "#the-kolco-command-locate-and-plan", "#the-kolco-command", anchorMissing},
		{"anchor of a code block's line", "docs/algorithms.md", "(command.md#plan-a-change)", "(../README.md#not-a-heading)", anchorMissing},
		{"anchor on its own page", "README.md", "(#kolco)", "(#kolco-1)", anchorMissing},
		{"contents entry missing", "docs/algorithms.md", "- [The ring, twice](#the-ring-1)\n", "", noContents},
		{"contents entry broken", "docs/algorithms.md", "](#kolcos-jump-again)", "](#kolco-s-jump-again)", noContents},
	} {
		t.Run(tc.name, func(t *testing.T) {
			planted := fstest.MapFS{}
			for name, f := range sound {
				planted[name] = &fstest.MapFile{Data: f.Data}
			}
			text := string(planted[tc.file].Data)
			if !strings.Contains(text, tc.old) {
				t.Fatalf("%s lacks %q", tc.file, tc.old)
			}
			planted[tc.file].Data = []byte(strings.Replace(text, tc.old, tc.new, 1))
			problems, err := checkDocs(planted)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(problems, func(p docProblem) bool { return p.kind == tc.kind }) {
				t.Errorf("found %v, want a problem of kind %q", problems, tc.kind)
			}
		})
	}
}

// checkDocs reads the Markdown files of fsys (testdata aside) and returns
// what is wrong with them.
func checkDocs(fsys fs.FS) ([]docProblem, error) {
	texts, err := readDocs(fsys)
	if err != nil {
		return nil, err
	}
	readme, ok := texts["README.md"]
	if !ok {
		return nil, fmt.Errorf("no README.md")
	}
	var problems []docProblem
	if n := strings.Count(readme, "\n"); n > readmeMaxLines {
		problems = append(problems, docProblem{"README.md", tooLong, fmt.Sprintf("%d lines, at most %d", n, readmeMaxLines)})
	}
	linked, linkProblems := checkLinks(fsys, texts)
	problems = append(problems, linkProblems...)
	pages, err := fs.Glob(fsys, "docs/*.md")
	if err != nil {
		return nil, err
	}
	for _, page := range pages {
		if !linked[page] {
			problems = append(problems, docProblem{"README.md", pageUnlinked, page})
		}
		problems = append(problems, contentsProblems(page, texts[page])...)
	}
	return problems, nil
}

// readDocs returns the text of every Markdown file of fsys, by its path,
// with its code blocks blanked.
func readDocs(fsys fs.FS) (map[string]string, error) {
	texts := map[string]string{}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && name != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return fs.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(name, ".md") {
			b, err := fs.ReadFile(fsys, name)
			if err != nil {
				return err
			}
			texts[name] = withoutCode(string(b))
		}
		return nil
	})
	return texts, err
}

// checkLinks follows every relative link of texts to its file and anchor,
// and returns the files README.md links and the links that lead nowhere.
func checkLinks(fsys fs.FS, texts map[string]string) (map[string]bool, []docProblem) {
	var problems []docProblem
	anchors := map[string][]string{} // file -> its headings' anchors
	for name, text := range texts {
		anchors[name] = headingAnchors(text, 0)
	}
	linked := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(texts)) {
		for _, target := range links(texts[name]) {
			file, anchor, _ := strings.Cut(target, "#")
			switch {
			case file == "":
				file = name
			case strings.HasPrefix(file, "/"):
				file = strings.TrimPrefix(file, "/")
			default:
				file = path.Join(path.Dir(name), file)
			}
			if name == "README.md" {
				linked[file] = true
			}
			if _, err := fs.Stat(fsys, file); err != nil {
				problems = append(problems, docProblem{name, fileMissing, target})
				continue
			}
			if a, ok := anchors[file]; ok && anchor != "" && !slices.Contains(a, anchor) {
				problems = append(problems, docProblem{name, anchorMissing, target})
			}
		}
	}
	return linked, problems
}

// contentsProblems checks that a page longer than contentsPast lines links
// each of its sections (its ## headings) before the first of them.
func contentsProblems(page, text string) []docProblem {
	if strings.Count(text, "\n") <= contentsPast {
		return nil
	}
	top := text
	if i := strings.Index(text, "\n## "); i >= 0 {
		top = text[:i]
	}
	var problems []docProblem
	for _, a := range headingAnchors(text, 2) {
		if !slices.Contains(links(top), "#"+a) {
			problems = append(problems, docProblem{page, noContents, "#" + a})
		}
	}
	return problems
}

var (
	mdFence    = regexp.MustCompile("(?m)^ {0,3}```[^\n]*\n(?:(?s:.)*?\n)? {0,3}```[ \t]*$")
	mdCodeSpan = regexp.MustCompile("`[^`\n]*`")
	// mdLink matches an inline link or image, [text](target) or
	// [text](target "title"), its text over lines too; mdLinkDef a
	// reference link's definition, [name]: target.
	mdLink    = regexp.MustCompile(`\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(([^()\s]+)(?:\s+"[^"]*")?\)`)
	mdLinkDef = regexp.MustCompile(`(?m)^ {0,3}\[[^\]]+\]:[ \t]*<?([^\s>]+)`)
	mdHeading = regexp.MustCompile(`(?m)^(#{1,6})[ \t]+(.*?)[ \t#]*$`)
)

// withoutCode blanks the lines of fenced code blocks, keeping the line
// count: their links are not links and their # lines are not headings.
func withoutCode(text string) string {
	return mdFence.ReplaceAllStringFunc(text, func(block string) string {
		return strings.Repeat("\n", strings.Count(block, "\n"))
	})
}

// links returns the targets of the links of text that stay in the
// repository (not http:, https: or mailto:), code spans aside.
func links(text string) []string {
	text = mdCodeSpan.ReplaceAllStringFunc(text, func(span string) string {
		if strings.Contains(span, "](") {
			return ""
		}
		return span
	})
	var targets []string
	for _, m := range append(mdLink.FindAllStringSubmatch(text, -1), mdLinkDef.FindAllStringSubmatch(text, -1)...) {
		if t := m[len(m)-1]; !strings.Contains(t, "://") && !strings.HasPrefix(t, "mailto:") {
			targets = append(targets, t)
		}
	}
	return targets
}

// headingAnchors returns the anchors GitHub gives the headings of text of
// one level (## is 2), or of every level for 0. A heading whose anchor an
// earlier one has gets a number: the-ring, the-ring-1, the-ring-2.
func headingAnchors(text string, level int) []string {
	var anchors []string
	seen := map[string]int{}
	for _, m := range mdHeading.FindAllStringSubmatch(text, -1) {
		a := mdSlug(m[2])
		n := seen[a]
		seen[a]++
		if n > 0 {
			a = fmt.Sprintf("%s-%d", a, n)
		}
		if level == 0 || len(m[1]) == level {
			anchors = append(anchors, a)
		}
	}
	return anchors
}

// mdSlug is GitHub's anchor for a heading: its text without markup,
// lowercased, punctuation dropped, each space a hyphen.
func mdSlug(title string) string {
	title = mdLink.ReplaceAllString(title, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
