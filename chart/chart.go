// Package chart draws the simulator's results - load per node, moved share
// and spread against the number of virtual nodes with the theory's curve,
// algorithms side by side - as SVG or PNG files, with gonum.org/v1/plot.
//
// It is a presentation package for the kolco command: the library
// packages never import it. The closed forms it draws beside measurements
// come from Karger et al., "Consistent Hashing and Random Trees" (STOC
// 1997), as computed by package sim/theory.
package chart

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// ErrFormat is returned for a file name whose extension is neither .svg
// nor .png.
var ErrFormat = errors.New("chart: file name must end in .svg or .png")

// ErrEmpty is returned for a chart without data.
var ErrEmpty = errors.New("chart: nothing to draw")

// Chart is a chart that can be drawn: a [Lines] or a [Bars].
type Chart interface {
	plot() (*plot.Plot, error)
}

// Series is one line of a [Lines] chart.
type Series struct {
	// Name is the legend's text; X and Y the points.
	Name string
	X, Y []float64
	// Theory draws the series dashed, without point marks: a closed form
	// beside the measurements.
	Theory bool
}

// Lines is a chart of series against a numeric x axis, such as the spread
// against the number of virtual nodes.
type Lines struct {
	// Title, XLabel and YLabel are the chart's texts.
	Title, XLabel, YLabel string
	// LogX and LogY draw the axes on a log scale (values must be > 0).
	LogX, LogY bool
	// Percent labels the y axis in percent (values are shares, 0.05 = 5%).
	Percent bool
	// Series are the lines, drawn in order.
	Series []Series
}

// Group is one colour of a [Bars] chart: a value per category.
type Group struct {
	// Name is the legend's text; Values[i] the bar of category i.
	Name   string
	Values []float64
}

// Bars is a grouped bar chart: for each category (a node, an algorithm)
// one bar per group (before/after, one per algorithm).
type Bars struct {
	// Title and YLabel are the chart's texts.
	Title, YLabel string
	// Percent labels the y axis in percent.
	Percent bool
	// Categories name the x positions; Groups are the colours.
	Categories []string
	Groups     []Group
}

// theoryDashes are the dash patterns of theory lines, in turn.
var theoryDashes = [][]vg.Length{
	{vg.Points(5), vg.Points(3)},
	{vg.Points(1.5), vg.Points(2)},
	{vg.Points(8), vg.Points(2), vg.Points(1.5), vg.Points(2)},
}

func (c Lines) plot() (*plot.Plot, error) {
	if len(c.Series) == 0 {
		return nil, ErrEmpty
	}
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = c.Title, c.XLabel, c.YLabel
	if c.LogX {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, logTicks{}
	}
	if c.LogY {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, logTicks{percent: c.Percent}
	}
	p.Add(plotter.NewGrid())
	// Theories first, so that a measurement on its closed form is drawn
	// over it, not hidden under it; the legend keeps the given order.
	var drawn []plot.Plotter
	measured, theories := 0, 0
	for _, s := range c.Series {
		if len(s.X) != len(s.Y) || len(s.X) == 0 {
			return nil, fmt.Errorf("%w: series %q has %d x and %d y values", ErrEmpty, s.Name, len(s.X), len(s.Y))
		}
		xys, err := s.points()
		if err != nil {
			return nil, err
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		line.Width = vg.Points(1.5)
		if s.Theory {
			// A wide pale grey band: a measurement drawn on it in a
			// thin coloured line stays visible, and so does the band
			// on either side of it. Each theory has its own dashes so
			// that two of them (one per node count) stay apart.
			line.Color, line.Width = color.Gray{Y: 175}, vg.Points(4)
			line.Dashes = theoryDashes[theories%len(theoryDashes)]
			theories++
			p.Add(line)
			p.Legend.Add(s.Name, line)
			continue
		}
		line.Color = plotutil.Color(measured)
		pts, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, err
		}
		pts.Color, pts.Shape = line.Color, plotutil.Shape(measured)
		measured++
		drawn = append(drawn, line, pts)
		p.Legend.Add(s.Name, line, pts)
	}
	p.Add(drawn...)
	if !c.LogY {
		niceAxis(&p.Y, c.Percent)
	}
	return p, nil
}

// points returns the series' points. The error wraps ErrEmpty for a
// non-finite value.
func (s Series) points() (plotter.XYs, error) {
	xys := make(plotter.XYs, len(s.X))
	for i := range s.X {
		xys[i].X, xys[i].Y = s.X[i], s.Y[i]
		if math.IsNaN(s.Y[i]) || math.IsInf(s.Y[i], 0) {
			return nil, fmt.Errorf("%w: series %q has a non-finite value", ErrEmpty, s.Name)
		}
	}
	return xys, nil
}

func (c Bars) plot() (*plot.Plot, error) {
	if len(c.Groups) == 0 || len(c.Categories) == 0 {
		return nil, ErrEmpty
	}
	p := plot.New()
	p.Title.Text, p.Y.Label.Text = c.Title, c.YLabel
	p.Add(plotter.NewGrid())
	// Bars share the width of one category, whatever the count, so that
	// 100 nodes still fit the page.
	slot := vg.Points(math.Max(2, math.Min(40, 480/float64(len(c.Categories)))))
	width := slot / vg.Length(len(c.Groups)+1)
	for i, g := range c.Groups {
		if len(g.Values) != len(c.Categories) {
			return nil, fmt.Errorf("%w: group %q has %d values for %d categories", ErrEmpty, g.Name, len(g.Values), len(c.Categories))
		}
		bars, err := plotter.NewBarChart(plotter.Values(g.Values), width)
		if err != nil {
			return nil, err
		}
		bars.Color = plotutil.Color(i)
		bars.LineStyle.Width = 0
		bars.Offset = (vg.Length(i) - vg.Length(len(c.Groups)-1)/2) * width
		p.Add(bars)
		p.Legend.Add(g.Name, bars)
	}
	niceAxis(&p.Y, c.Percent)
	p.NominalX(c.Categories...)
	if len(c.Categories) > 8 {
		p.X.Tick.Label.Rotation = math.Pi / 3
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YCenter
	}
	if len(c.Categories) > 40 { // too many names to read: mark every tenth
		labels := make([]string, len(c.Categories))
		for i := range labels {
			if i%10 == 0 {
				labels[i] = c.Categories[i]
			}
		}
		p.NominalX(labels...)
	}
	return p, nil
}

// Width and Height are the size of a chart without its legend: 16 cm by
// 10 cm. The legend stands to the right of the plot, where it covers no
// data whatever its length, and widens the image by its own width (the
// image grows taller too if the legend would not fit).
const (
	Width  = 16 * vg.Centimeter
	Height = 10 * vg.Centimeter
)

// margin is kept free around the image's edges, and legendGap between the
// plot and the legend.
const (
	margin    = 4 * vg.Millimeter
	legendGap = 4 * vg.Millimeter
)

// Format returns "svg" or "png" from a file name's extension. The error is
// ErrFormat for any other.
func Format(path string) (string, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg":
		return "svg", nil
	case ".png":
		return "png", nil
	}
	return "", fmt.Errorf("%w (got %q)", ErrFormat, path)
}

// Write draws c to w in format "svg" or "png".
func Write(w io.Writer, format string, c Chart) error {
	if format != "svg" && format != "png" {
		return fmt.Errorf("%w (format %q)", ErrFormat, format)
	}
	p, err := c.plot()
	if err != nil {
		return err
	}
	legend := takeLegend(p)
	width, height := size(p, legend)
	if format == "png" {
		cv, err := draw.NewFormattedCanvas(width, height, format)
		if err != nil {
			return err
		}
		drawAll(p, legend, draw.New(cv))
		_, err = cv.WriteTo(w)
		return err
	}
	cv := &svgCanvas{Canvas: vgsvg.New(width, height)}
	drawAll(p, legend, draw.New(cv))
	var buf bytes.Buffer
	if _, err := cv.WriteTo(&buf); err != nil {
		return err
	}
	svg, err := fitTexts(buf.Bytes(), cv.widths)
	if err != nil {
		return err
	}
	_, err = w.Write(svg)
	return err
}

// takeLegend returns p's legend and leaves p an empty one, so that p.Draw
// draws no legend over the data: drawAll puts it beside the plot.
func takeLegend(p *plot.Plot) plot.Legend {
	l := p.Legend
	p.Legend = plot.NewLegend()
	l.Top, l.Left = true, true // the icons on the left, the texts after
	l.Padding = vg.Points(3)
	return l
}

// size returns the image's size for p with legend beside it.
func size(p *plot.Plot, legend plot.Legend) (w, h vg.Length) {
	box := legend.Rectangle(draw.Canvas{}).Size()
	w, h = Width, Height
	if box.X > 0 {
		w += legendGap + box.X
	}
	// The legend's top is level with the data area's, below the title.
	if need := 2*margin + titleHeight(p) + box.Y; need > h {
		h = need
	}
	return w, h
}

// titleHeight returns the height p.Draw gives its title.
func titleHeight(p *plot.Plot) vg.Length {
	if p.Title.Text == "" {
		return 0
	}
	return p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding
}

// arrange splits dc, inside its margin, into the plot's canvas and the
// legend's column to its right, from the data area's top down.
func arrange(p *plot.Plot, legend plot.Legend, dc draw.Canvas) (plotC, legendC draw.Canvas) {
	dc = draw.Crop(dc, margin, -margin, margin, -margin)
	lw := legend.Rectangle(draw.Canvas{}).Size().X
	plotC = dc
	if lw > 0 {
		plotC = draw.Crop(dc, 0, -(legendGap + lw), 0, 0)
	}
	legendC = dc
	legendC.Min.X = plotC.Max.X + legendGap
	legendC.Max.Y = dc.Max.Y - titleHeight(p)
	return plotC, legendC
}

// drawAll draws p and its legend on dc.
func drawAll(p *plot.Plot, legend plot.Legend, dc draw.Canvas) {
	// The whole image is white, margin and legend included: p.Draw
	// would paint its own part only.
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	p.BackgroundColor = nil
	plotC, legendC := arrange(p, legend, dc)
	p.Draw(plotC)
	legend.Draw(legendC)
}

// Check returns the error [Save] would return for path before anything
// is drawn: ErrFormat for an extension other than .svg or .png, or an
// *fs.PathError naming path when its directory does not exist or is not a
// directory. A command checks its --plot file before a long run.
func Check(path string) error {
	if _, err := Format(path); err != nil {
		return err
	}
	fi, err := os.Stat(filepath.Dir(path))
	switch {
	case err != nil:
		return named("create", path, err)
	case !fi.IsDir():
		return &fs.PathError{Op: "create", Path: path, Err: syscall.ENOTDIR}
	}
	return nil
}

// Save draws c to the file path, SVG or PNG by its extension. It draws
// first, then writes a temporary file in the same directory and renames
// it, so that path is either the whole chart or untouched. The error wraps
// ErrFormat or ErrEmpty, or is an *fs.PathError naming path (never the
// temporary file).
func Save(path string, c Chart) error {
	format, err := Format(path)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := Write(&buf, format, c); err != nil {
		return err
	}
	if err := writeFile(path, buf.Bytes()); err != nil {
		return named("write", path, err)
	}
	return nil
}

// writeFile writes data to a temporary file beside path and renames it
// to path.
func writeFile(path string, data []byte) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Chmod(0o644); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// named returns err as an *fs.PathError for path: the file system's
// errors name the temporary file or the directory, which the caller never
// gave.
func named(op, path string, err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}
