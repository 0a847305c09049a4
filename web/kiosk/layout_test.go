package kiosk

import (
	"encoding/base64"
	"encoding/xml"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The kiosk board's geometry: the grid chosen for each number of types,
// the times a block has room for, the stylesheet's copy of the same
// numbers, and the QR code's image.

func TestKioskLayoutForEachNumberOfTypes(t *testing.T) {
	want := map[int]kioskLayout{1: {1, 1}, 2: {2, 1}, 3: {3, 1}, 4: {2, 2}, 6: {3, 2}, 8: {4, 2}, 12: {4, 3}}
	for n := 1; n <= kioskMaxC*kioskMaxR; n++ {
		l := layoutFor(n)
		if w, ok := want[n]; ok && l != w {
			t.Errorf("%d types: %d columns by %d rows, want %d by %d", n, l.cols, l.rows, w.cols, w.rows)
		}
		if l.cols*l.rows < n || l.cols > kioskMaxC || l.rows > kioskMaxR {
			t.Errorf("%d types: %d by %d has no room for them", n, l.cols, l.rows)
		}
		// A whole empty row or column would waste the screen.
		if (l.cols-1)*l.rows >= n || l.cols*(l.rows-1) >= n {
			t.Errorf("%d types: %d by %d leaves a row or column empty", n, l.cols, l.rows)
		}
		if p := l.perDay(); p < 3 || p > kioskMaxPerDay {
			t.Errorf("%d types: %d times a day, want 3 to %d", n, p, kioskMaxPerDay)
		}
	}
	if got := layoutFor(0); got != (kioskLayout{1, 1}) {
		t.Errorf("no types: %v", got)
	}
	if got := layoutFor(100); got != (kioskLayout{kioskMaxC, kioskMaxR}) {
		t.Errorf("100 types: %v", got)
	}
}

// The stylesheet sizes the blocks with the same numbers the server counts
// times with.
func TestKioskStylesheetMatchesTheLayout(t *testing.T) {
	css, err := os.ReadFile("../../static/app.css")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		axis  string
		prop  string
		table []float64
	}{{"cols", "--kc", kioskFontCols[:]}, {"rows", "--kr", kioskFontRows[:]}} {
		for i := 1; i < len(c.table); i++ {
			re := regexp.MustCompile(`\.kiosk-` + c.axis + `-` + strconv.Itoa(i) + ` \{ grid-template-` + map[string]string{"cols": "columns", "rows": "rows"}[c.axis] + `: repeat\(` + strconv.Itoa(i) + `, minmax\(0, 1fr\)\); ` + c.prop + `: ([0-9.]+); \}`)
			m := re.FindSubmatch(css)
			if m == nil {
				t.Errorf("app.css has no rule for .kiosk-%s-%d", c.axis, i)
				continue
			}
			if v, _ := strconv.ParseFloat(string(m[1]), 64); v != c.table[i] {
				t.Errorf(".kiosk-%s-%d sets %s: %v; web/kiosk.go counts with %v", c.axis, i, c.prop, v, c.table[i])
			}
		}
	}
	for _, rule := range []string{
		"--u: min(1vh, 0.5625vw)",
		"grid-template-columns: minmax(0, 1fr) calc(30 * var(--u)); grid-template-rows: calc(9 * var(--u)) minmax(0, 1fr)",
		"padding: calc(2 * var(--u)) calc(2.5 * var(--u))",
		"padding: 0.6em 0.8em",
		"grid-template-columns: repeat(auto-fill, 3.6em); grid-auto-rows: 1.5em; gap: 0.3em",
		"margin: 0.35em 0 0.2em; font-size: 1em; line-height: 1.3",
	} {
		if !strings.Contains(string(css), rule) {
			t.Errorf("app.css lost %q, which web/kiosk.go's geometry assumes", rule)
		}
	}
}

func TestKioskQRCodeIsAnSVGImage(t *testing.T) {
	const u = "https://clinic.example.org/c/demo"
	uri, err := qrDataURI(u)
	if err != nil {
		t.Fatal(err)
	}
	b64, ok := strings.CutPrefix(string(uri), "data:image/svg+xml;base64,")
	if !ok {
		t.Fatalf("not an SVG data URI: %.60s", uri)
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	var svg struct {
		ViewBox string `xml:"viewBox,attr"`
		Path    struct {
			D string `xml:"d,attr"`
		} `xml:"path"`
	}
	if err := xml.Unmarshal(raw, &svg); err != nil {
		t.Fatalf("the SVG does not parse: %v", err)
	}
	// 29 modules (version 3, as this URL needs at level M) and a quiet
	// zone of four on each side; the top-left finder pattern's first row
	// is a run of seven dark modules.
	if svg.ViewBox != "0 0 37 37" {
		t.Errorf("viewBox %q, want 0 0 37 37", svg.ViewBox)
	}
	if !strings.HasPrefix(svg.Path.D, "M4 4h7v1h-7z") {
		t.Errorf("the code does not start with a finder pattern: %.40s", svg.Path.D)
	}
}
