package chart

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"image/png"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// kinds holds one chart of each kind the kolco command draws.
func kinds() map[string]Chart {
	v := []float64{1, 10, 100, 1000}
	many := make([]string, 60)
	vals := make([]float64, 60)
	for i := range many {
		many[i] = fmt.Sprintf("node-%d", i)
		vals[i] = 1.0/60 + float64(i%7)*1e-4
	}
	return map[string]Chart{
		"spread-vs-vnodes": Lines{Title: "spread", XLabel: "V", YLabel: "spread", LogX: true, Percent: true, Series: []Series{
			{Name: "ring", X: v, Y: []float64{0.9, 0.3, 0.1, 0.03}},
			{Name: "theory", X: v, Y: []float64{0.87, 0.29, 0.095, 0.03}, Theory: true},
		}},
		"lookup-log": Lines{Title: "ns", XLabel: "nodes", YLabel: "ns", LogX: true, LogY: true, Series: []Series{
			{Name: "ring", X: []float64{10, 100, 1000}, Y: []float64{20, 25, 40}},
		}},
		"load-per-node": Bars{Title: "load", YLabel: "share", Percent: true, Categories: []string{"a", "b", "c"}, Groups: []Group{
			{Name: "before", Values: []float64{0.3, 0.3, 0.4}}, {Name: "after", Values: []float64{0.5, 0.5, 0}},
		}},
		"side-by-side": Bars{Title: "keys moved", Categories: []string{"ring", "modulo", "rendezvous", "maglev"}, Groups: []Group{
			{Name: "moved", Values: []float64{0.09, 0.9, 0.09, 0.1}}, {Name: "theory", Values: []float64{0.09, 0.9, 0.09, 0.09}},
		}},
		"many-nodes": Bars{Title: "load", Categories: many, Groups: []Group{{Name: "share", Values: vals}}},
	}
}

func TestEveryKindRendersValidSVGAndPNG(t *testing.T) {
	dir := t.TempDir()
	for name, c := range kinds() {
		for _, ext := range []string{"svg", "png"} {
			t.Run(name+"."+ext, func(t *testing.T) {
				path := filepath.Join(dir, name+"."+ext)
				if err := Save(path, c); err != nil {
					t.Fatal(err)
				}
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if ext == "png" {
					img, err := png.Decode(bytes.NewReader(data))
					if err != nil {
						t.Fatalf("png: %v", err)
					}
					if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 100 {
						t.Errorf("png is %v, want a chart-sized image", b)
					}
					return
				}
				checkSVG(t, data)
			})
		}
	}
}

// checkSVG parses data as XML to its end and checks the root is <svg>.
func checkSVG(t *testing.T, data []byte) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	root := ""
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("svg does not parse: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		t.Errorf("root element %q, want svg", root)
	}
}

func TestSaveRejectsUnknownFormatAndLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	c := kinds()["load-per-node"]
	if err := Save(filepath.Join(dir, "x.gif"), c); !errors.Is(err, ErrFormat) {
		t.Errorf("gif: err %v, want ErrFormat", err)
	}
	bad := Lines{Series: []Series{{Name: "broken", X: []float64{1, 2}, Y: []float64{1}}}}
	if err := Save(filepath.Join(dir, "bad.svg"), bad); !errors.Is(err, ErrEmpty) {
		t.Errorf("mismatched series: err %v, want ErrEmpty", err)
	}
	if err := Save(filepath.Join(dir, "empty.png"), Bars{}); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty bars: err %v, want ErrEmpty", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		t.Errorf("failed saves left %s behind", e.Name())
	}
}

// crowded returns charts whose data peak where the legend sits, the top
// right corner, with many legend entries.
func crowded() map[string]Chart {
	bars := Bars{Title: "rising", Categories: []string{"a", "b", "c", "d"}}
	for g := range 8 {
		bars.Groups = append(bars.Groups, Group{Name: fmt.Sprintf("group number %d", g), Values: []float64{0.1, 0.2, 0.3, 0.4 + float64(g)/100}})
	}
	lines := Lines{Title: "rising", Percent: true}
	logs := Lines{Title: "rising", LogX: true, LogY: true}
	for s := range 6 {
		x := []float64{1, 10, 100, 1000}
		lines.Series = append(lines.Series, Series{Name: fmt.Sprintf("series %d", s), X: x, Y: []float64{0.1, 0.2, 0.3, 0.5 + float64(s)/100}})
		logs.Series = append(logs.Series, Series{Name: fmt.Sprintf("series %d", s), X: x, Y: []float64{10, 100, 1000, 10000 + float64(s)}})
	}
	return map[string]Chart{"bars": bars, "lines": lines, "log-y": logs}
}

// TestLegendFitsBesideThePlot lays every chart out as Write does and checks
// that the legend, as drawn, lies in the image and right of the plot -
// title, axes, tick labels and data - however many and long its entries.
func TestLegendFitsBesideThePlot(t *testing.T) {
	all := kinds()
	maps.Copy(all, crowded())
	for name, c := range all {
		t.Run(name, func(t *testing.T) {
			p, err := c.plot()
			if err != nil {
				t.Fatal(err)
			}
			legend := takeLegend(p)
			w, h := size(p, legend)
			dc := draw.New(vgimg.New(w, h))
			plotC, legendC := arrange(p, legend, dc)
			box := legend.Rectangle(draw.Canvas{}).Size()
			drawn := vg.Rectangle{Min: vg.Point{X: legendC.Min.X, Y: legendC.Max.Y - box.Y}, Max: vg.Point{X: legendC.Min.X + box.X, Y: legendC.Max.Y}}
			if drawn.Min.X <= plotC.Max.X || drawn.Min.X <= p.DataCanvas(plotC).Max.X {
				t.Errorf("the legend starts at x %.1fpt, the plot ends at %.1fpt", drawn.Min.X, plotC.Max.X)
			}
			if drawn.Max.X > w || drawn.Min.Y < 0 || drawn.Max.Y > h {
				t.Errorf("the legend %v runs out of the %vx%v image", drawn, w, h)
			}
			if box.X == 0 || box.Y == 0 {
				t.Errorf("the legend is %v: its entries were lost", box)
			}
		})
	}
}

// legendNames returns the texts of c's legend entries.
func legendNames(c Chart) map[string]bool {
	names := map[string]bool{}
	switch c := c.(type) {
	case Lines:
		for _, s := range c.Series {
			names[s.Name] = true
		}
	case Bars:
		for _, g := range c.Groups {
			names[g.Name] = true
		}
	}
	return names
}

// TestLegendStandsRightOfThePlot reads the level texts of each chart's
// SVG and checks that every legend entry starts right of where every
// other text (title, axis label, tick label) ends: the legend is beside
// the plot, not inside it.
func TestLegendStandsRightOfThePlot(t *testing.T) {
	all := kinds()
	maps.Copy(all, crowded())
	for name, c := range all {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, "svg", c); err != nil {
				t.Fatal(err)
			}
			names := legendNames(c)
			legendStart, plotEnd := math.Inf(1), math.Inf(-1)
			for _, x := range levelTexts(t, buf.Bytes()) {
				if names[x.text] {
					legendStart = min(legendStart, x.left)
				} else {
					plotEnd = max(plotEnd, x.right)
				}
			}
			if math.IsInf(legendStart, 0) || math.IsInf(plotEnd, 0) {
				t.Fatalf("legend from %v, plot to %v: texts not found", legendStart, plotEnd)
			}
			if legendStart <= plotEnd {
				t.Errorf("the legend starts at x %.1fpt, left of the plot's texts' end at %.1fpt", legendStart, plotEnd)
			}
		})
	}
}

// placedText is a text of an SVG and its horizontal extent in points.
type placedText struct {
	text        string
	left, right float64
}

// levelTexts returns the texts of svg that are not rotated, each with its
// extent as laid out in gonum/plot's font.
func levelTexts(t *testing.T, svg []byte) []placedText {
	t.Helper()
	var out []placedText
	var rotated []bool // one per open <g>
	var cur *placedText
	var size float64
	dec := xml.NewDecoder(bytes.NewReader(svg))
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			attrs := map[string]string{}
			for _, a := range tok.Attr {
				attrs[a.Name.Local] = a.Value
			}
			switch tok.Name.Local {
			case "g":
				rotated = append(rotated, strings.Contains(attrs["transform"], "rotate") || slices.Contains(rotated, true))
			case "text":
				if slices.Contains(rotated, true) {
					continue
				}
				x, err := strconv.ParseFloat(attrs["x"], 64)
				if err != nil {
					t.Fatalf("text x %q: %v", attrs["x"], err)
				}
				_, sz, _ := strings.Cut(attrs["style"], "font-size:")
				sz, _, _ = strings.Cut(sz, "px")
				if size, err = strconv.ParseFloat(sz, 64); err != nil {
					t.Fatalf("text style %q: %v", attrs["style"], err)
				}
				cur = &placedText{left: x}
			}
		case xml.CharData:
			if cur != nil {
				cur.text += string(tok)
			}
		case xml.EndElement:
			switch tok.Name.Local {
			case "g":
				rotated = rotated[:len(rotated)-1]
			case "text":
				if cur != nil {
					face := font.DefaultCache.Lookup(plot.DefaultFont, vg.Length(size))
					cur.right = cur.left + face.Width(cur.text).Points()
					out = append(out, *cur)
					cur = nil
				}
			}
		}
	}
}

// TestSaveErrorsNameThePath: a file that cannot be written is reported
// under the name the caller gave, not a temporary file's.
func TestSaveErrorsNameThePath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "out.png")
	for name, err := range map[string]error{
		"Check": Check(path),
		"Save":  Save(path, kinds()["load-per-node"]),
	} {
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v; want ErrNotExist naming %s", name, err, path)
		}
	}
}
