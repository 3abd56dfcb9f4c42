package chart

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The charts are laid out with the Liberation fonts that gonum/plot
// embeds, but an SVG only names its font: a browser without Liberation
// Serif draws the texts in its own default, wider or narrower, and a
// label placed for Liberation's widths runs past the image's edge
// (Chromium with DejaVu Sans showed the x axis's last tick "1000" as
// "100"). Embedding the font (vgsvg.EmbedFonts) would add its 393 KB to
// every chart. Instead each text carries the width it was laid out at
// (textLength, which a renderer must honour by scaling the glyphs), and
// the font is named with its metric twin and a generic family after it,
// which every renderer has.

// svgCanvas is an SVG canvas that records the width of each text drawn,
// in order: one <text> element per FillString.
type svgCanvas struct {
	*vgsvg.Canvas
	widths []vg.Length
}

// FillString draws s and records its width in the layout's font.
func (c *svgCanvas) FillString(f font.Face, pt vg.Point, s string) {
	c.widths = append(c.widths, f.Width(s))
	c.Canvas.FillString(f, pt, s)
}

// fallbacks are the families named after a Liberation font: its metric
// twin, then the generic family.
var fallbacks = map[string]string{
	"Liberation Serif": "'Times New Roman',serif",
	"Liberation Sans":  "Arial,sans-serif",
	"Liberation Mono":  "'Courier New',monospace",
}

// fontFamily matches the family vgsvg names in a text's style.
var fontFamily = regexp.MustCompile(`font-family:([^;"]+)`)

// fitTexts gives the i-th <text> element of svg the width widths[i] and
// names fallback families after its font. It fails when the counts
// differ, which would put widths on the wrong texts.
func fitTexts(svg []byte, widths []vg.Length) ([]byte, error) {
	parts := bytes.Split(svg, []byte("<text "))
	if len(parts)-1 != len(widths) {
		return nil, fmt.Errorf("chart: the SVG holds %d texts, %d were drawn", len(parts)-1, len(widths))
	}
	var out bytes.Buffer
	out.Write(parts[0])
	for i, p := range parts[1:] {
		fmt.Fprintf(&out, `<text textLength="%.5g" lengthAdjust="spacingAndGlyphs" `, widths[i].Points())
		out.Write(fontFamily.ReplaceAllFunc(p, func(m []byte) []byte {
			family := strings.TrimPrefix(string(m), "font-family:")
			generic, ok := fallbacks[family]
			if !ok {
				generic = "serif"
			}
			return []byte("font-family:'" + family + "'," + generic)
		}))
	}
	return out.Bytes(), nil
}
