// Package docs holds the long documentation of the server, the pages the
// README links to (architecture, security, operations, e-mail, waitlist,
// languages, performance), and the test that keeps architecture.md true:
// every repository path and every package-qualified Go symbol the page
// names must exist in today's code, and every relative link in these pages
// and the README must lead to a file (and heading) that exists. The
// package has no code of its own; it exists so that `go test ./...` runs
// that test.
package docs
