// Package static embeds the stylesheet, scripts and the vendored htmx
// files that `make static` copies from node_modules into vendor/.
package static

import "embed"

// FS holds every file of this directory, vendor/ included once built.
//
//go:embed *
var FS embed.FS
