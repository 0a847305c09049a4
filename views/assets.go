// Package views holds the templ components: layouts, the slot grid, the
// patient, staff and kiosk pages. Components take view models shaped for
// display and do no I/O. Each page family has its own templ file, which
// also declares the view models only that family uses; models.go holds
// those several families share.
package views

// Assets turns a static file's name into its versioned URL.
type Assets interface {
	URL(name string) string
}
