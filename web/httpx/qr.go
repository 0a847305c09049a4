package httpx

import (
	"encoding/base64"
	"fmt"
	"image"
	"strings"

	"github.com/a-h/templ"
	"github.com/boombuler/barcode/qr"
)

// QRDataURI draws text as a QR code (error correction M, so a smudged
// screen still scans) in an SVG data URI: one path of dark modules on a
// white square with the standard four-module quiet zone. The kiosk's
// booking address and a second factor's set-up use it; an error never
// quotes the text, which may be a secret.
func QRDataURI(text string) (templ.SafeURL, error) {
	code, err := qr.Encode(text, qr.M, qr.Auto)
	if err != nil {
		return "", fmt.Errorf("qr code of %d bytes: %w", len(text), err)
	}
	const quiet = 4
	n := code.Bounds().Dx()
	var svg strings.Builder
	fmt.Fprintf(&svg, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" shape-rendering="crispEdges">`, n+2*quiet, n+2*quiet)
	fmt.Fprintf(&svg, `<rect width="%d" height="%d" fill="#fff"/><path fill="#000" d="`, n+2*quiet, n+2*quiet)
	for y := 0; y < n; y++ {
		for x := 0; x < n; {
			if !qrDark(code, x, y) {
				x++
				continue
			}
			run := x
			for run < n && qrDark(code, run, y) {
				run++
			}
			fmt.Fprintf(&svg, "M%d %dh%dv1h-%dz", x+quiet, y+quiet, run-x, run-x)
			x = run
		}
	}
	svg.WriteString(`"/></svg>`)
	return templ.SafeURL("data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(svg.String()))), nil
}

func qrDark(code image.Image, x, y int) bool {
	min := code.Bounds().Min
	r, _, _, _ := code.At(min.X+x, min.Y+y).RGBA()
	return r < 0x8000
}
