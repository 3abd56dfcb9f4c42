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
	"strings"
	"testing"

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
		"side-by-side": Bars{Title: "moved", Categories: []string{"ring", "modulo", "rendezvous", "maglev"}, Groups: []Group{
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

// peak returns the highest value a chart holds.
func peak(c Chart) float64 {
	top := math.Inf(-1)
	switch c := c.(type) {
	case Bars:
		for _, g := range c.Groups {
			top = max(top, slices.Max(g.Values))
		}
	case Lines:
		for _, s := range c.Series {
			top = max(top, slices.Max(s.Y))
		}
	}
	return top
}

// TestLegendCoversNoData lays every chart out as Write does and checks
// that the highest value is drawn below the legend's last entry.
func TestLegendCoversNoData(t *testing.T) {
	all := kinds()
	maps.Copy(all, crowded())
	for name, c := range all {
		t.Run(name, func(t *testing.T) {
			p, err := c.plot()
			if err != nil {
				t.Fatal(err)
			}
			dc := draw.New(vgimg.New(Width, Height))
			clearLegend(p, dc)
			data := p.DataCanvas(dc)
			top := data.Y(p.Y.Norm(peak(c)))
			legend := p.Legend.Rectangle(legendCanvas(p, dc)).Min.Y - p.Legend.TextStyle.FontExtents().Descent
			if top >= legend {
				t.Errorf("the highest value is drawn at %.1fpt, the legend reaches down to %.1fpt", top, legend)
			}
		})
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
