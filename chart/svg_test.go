package chart

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"

	"github.com/kolco-dev/kolco/internal/realprog"
)

// genericFamilies are the CSS families every renderer maps to a font it
// has.
var genericFamilies = []string{"serif", "sans-serif", "monospace", "cursive", "fantasy", "system-ui"}

// TestSVGNamesAFontEveryRendererHas: every text's font-family list ends
// in a generic family, and every text carries the width it was laid out
// at, so that a renderer without the Liberation fonts draws it in place.
func TestSVGNamesAFontEveryRendererHas(t *testing.T) {
	family := regexp.MustCompile(`font-family:([^;"]+)`)
	for name, c := range kinds() {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, "svg", c); err != nil {
				t.Fatal(err)
			}
			checkSVG(t, buf.Bytes())
			texts := strings.Split(buf.String(), "<text ")[1:]
			if len(texts) == 0 {
				t.Fatal("the SVG draws no text")
			}
			for _, text := range texts {
				m := family.FindStringSubmatch(text)
				if m == nil {
					t.Errorf("a text names no font: %.80s", text)
					continue
				}
				names := strings.Split(m[1], ",")
				if last := strings.TrimSpace(names[len(names)-1]); !slices.Contains(genericFamilies, last) {
					t.Errorf("font-family %q ends in %q, not a generic family", m[1], last)
				}
				if !strings.Contains(text, "textLength=") || !strings.Contains(text, `lengthAdjust="spacingAndGlyphs"`) {
					t.Errorf("a text has no textLength: %.80s", text)
				}
			}
		})
	}
}

// TestSVGTextsFitInChromium draws each kind of chart as an SVG, opens
// them in headless Chromium, whose fonts here are not the Liberation
// fonts the layout measured, and checks that every text is drawn inside
// its image at the width the layout gave it: without the widths, the x
// axis's last tick "1000" ran past the image's edge and was cut to "100".
func TestSVGTextsFitInChromium(t *testing.T) {
	bin := realprog.Binary(t, "chromium", "chromium")
	dir := t.TempDir()
	var page strings.Builder
	page.WriteString("<!DOCTYPE html><html><body style=\"margin:0\">\n")
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range kinds() {
			if !yield(n) {
				return
			}
		}
	})
	for _, name := range names {
		var buf bytes.Buffer
		if err := Write(&buf, "svg", kinds()[name]); err != nil {
			t.Fatal(err)
		}
		svg := buf.String()
		svg = svg[strings.Index(svg, "<svg"):] // inline: no XML prolog
		page.WriteString("<div data-chart=\"" + name + "\">" + svg + "</div>\n")
	}
	// For each text: its drawn box against its image's box, in CSS
	// pixels (for a level text, the box's width is the text's length),
	// the image's pixels per point and the font's size in points.
	page.WriteString(`<pre id="out"></pre><script>
const out = [];
for (const div of document.querySelectorAll("div[data-chart]")) {
  const svg = div.querySelector("svg"), box = svg.getBoundingClientRect();
  const scale = box.width / svg.viewBox.baseVal.width;
  for (const el of svg.querySelectorAll("text")) {
    const r = el.getBoundingClientRect(), m = el.getScreenCTM();
    out.push({chart: div.dataset.chart, text: el.textContent, level: Math.abs(m.b) < 1e-6,
      left: r.left - box.left, right: box.right - r.right, top: r.top - box.top, bottom: box.bottom - r.bottom,
      width: r.width, scale: scale, size: parseFloat(el.style.fontSize)});
  }
}
document.getElementById("out").textContent = JSON.stringify(out);
</script></body></html>`)
	file := filepath.Join(dir, "charts.html")
	if err := os.WriteFile(file, []byte(page.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := runChromium(t, bin, "--dump-dom", "file://"+file)
	_, result, ok := strings.Cut(dom, `<pre id="out">`)
	result, _, ok2 := strings.Cut(result, "</pre>")
	if !ok || !ok2 || result == "" {
		t.Fatalf("Chromium printed no result: %.500s", dom)
	}
	var texts []struct {
		Chart, Text                     string
		Level                           bool // not rotated: its box's width is its length
		Left, Right, Top, Bottom, Width float64
		Scale, Size                     float64
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(result)), &texts); err != nil {
		t.Fatal(err)
	}
	if len(texts) < 10*len(names) {
		t.Fatalf("Chromium measured %d texts in %d charts", len(texts), len(names))
	}
	for _, x := range texts {
		if min(x.Left, x.Right, x.Top, x.Bottom) < -0.5 {
			t.Errorf("%s: %q is drawn %.1fpx past the image's edge (left %.1f, right %.1f, top %.1f, bottom %.1f)",
				x.Chart, x.Text, -min(x.Left, x.Right, x.Top, x.Bottom), x.Left, x.Right, x.Top, x.Bottom)
		}
		// The width the layout measured the text at, in the font
		// gonum/plot lays out with. A glyph's ink may reach a little
		// past its advance ("V").
		face := font.DefaultCache.Lookup(plot.DefaultFont, vg.Length(x.Size))
		want := face.Width(x.Text).Points() * x.Scale
		if d := math.Abs(x.Width - want); x.Level && d > 1.5+0.05*want {
			t.Errorf("%s: %q is drawn %.1fpx wide, laid out at %.1fpx", x.Chart, x.Text, x.Width, want)
		}
	}
}

// runChromium runs headless Chromium with args and returns its standard
// output. Chromium and the processes it forks run in a process group of
// their own, which is killed when it returns, and die with the test's
// process if that is killed first.
func runChromium(t *testing.T, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args = append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--user-data-dir=" + t.TempDir()}, args...)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	return stdout.String()
}
