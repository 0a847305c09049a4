// Package migrations embeds the goose SQL migrations, since //go:embed
// cannot reach a parent directory from the code that applies them.
package migrations

import "embed"

//go:embed *.sql
var FS embed.FS
