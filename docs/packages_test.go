package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryPackageHasItsLine fails for every folder holding Go code that
// architecture.md's package list does not name in a row of its own
// ("| `internal/holds` |"), so a new package cannot land unmapped.
func TestEveryPackageHasItsLine(t *testing.T) {
	page, err := os.ReadFile(filepath.Join(repoRoot, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	for _, line := range strings.Split(string(page), "\n") {
		if name, ok := strings.CutPrefix(line, "| `"); ok {
			if name, _, ok := strings.Cut(name, "`"); ok {
				rows[strings.TrimSuffix(name, "/")] = true
			}
		}
	}
	var dirs []string
	for _, root := range []string{"cmd", "internal", "web", "views", "static", "migrations", "docs"} {
		err := filepath.WalkDir(filepath.Join(repoRoot, root), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !strings.HasSuffix(p, ".go") {
				return nil
			}
			rel, err := filepath.Rel(repoRoot, filepath.Dir(p))
			if err != nil {
				return err
			}
			dirs = append(dirs, filepath.ToSlash(rel))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(dirs) < 30 {
		t.Fatalf("found only %d folders with Go code: the walk is wrong", len(dirs))
	}
	for _, d := range dirs {
		if !rows[d] {
			t.Errorf("architecture.md has no row for the package in %s", d)
			rows[d] = true // once per folder
		}
	}
}
