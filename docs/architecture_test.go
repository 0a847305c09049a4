package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// repoRoot is the repository's root as seen from this package's folder,
// where go test runs.
const repoRoot = ".."

// roots are the repository's top-level folders: a word whose first
// segment is one of them, followed by a slash, is a repository path.
// The list is fixed on purpose, so that a path under a folder that has
// since gone still fails instead of passing unnoticed.
var roots = []string{"cmd", "internal", "web", "views", "static", "migrations", "queries", "docs"}

// fileExts are the endings that make a backticked word without a root a
// file name, looked for in the folders its line names.
var fileExts = []string{".go", ".sql", ".templ", ".toml", ".txt", ".md", ".png", ".js", ".css", ".yaml", ".json"}

// externalPackages are packages outside this module that the page may
// name (`pgx.Tx`); a qualified, exported name of any other package that is
// not ours fails, so that a typo in a package name is not taken for a
// dependency.
var externalPackages = []string{
	"pgx", "pgxpool", "pgconn", "redis", "river", "echo", "templ", "http", "time",
	"slog", "context", "errors", "sql", "goose", "scs", "singleflight", "prometheus",
}

var (
	// symbolRe is a package-qualified Go symbol: pkg.Name or pkg.Type.Method.
	symbolRe = regexp.MustCompile(`^([a-z][a-z0-9]*)\.([A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z_][A-Za-z0-9_]*))?(?:\(\))?$`)
	// codeSymbolRe finds exported package-qualified symbols inside a code
	// block, where words are not delimited by backticks.
	codeSymbolRe = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./])([a-z][a-z0-9]*)\.([A-Z][A-Za-z0-9_]*)(?:\.([A-Za-z_][A-Za-z0-9_]*))?`)
	// codePathRe finds repository paths inside a code block.
	codePathRe = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./-])((?:` + strings.Join(roots, "|") + `)/[A-Za-z0-9_./*-]*)`)
	// codeFileRe finds bare Go, SQL and templ file names inside a code block.
	codeFileRe = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./-])([A-Za-z0-9_]+\.(?:go|sql|templ))(?:[^A-Za-z0-9_]|$)`)
	inlineRe   = regexp.MustCompile("`([^`\n]+)`")
)

// TestArchitectureNamesWhatExists reads architecture.md and fails, naming
// each, for every repository path that does not exist and every Go symbol
// that is not declared. The convention it checks is stated at the top of
// the page: symbols are written package-qualified in backticks
// (`holds.Store.ClaimAny`, `booking.Service`); files and folders as paths
// from the repository root (`internal/holds/claim.go`, `internal/holds/`),
// or by their bare name on a line that names their folder.
func TestArchitectureNamesWhatExists(t *testing.T) {
	src, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	files := repoFiles(t)
	idx := newPackageIndex(t, files)
	refs := references(string(src))
	count := map[refKind]int{}
	for _, ref := range refs {
		count[ref.kind]++
		switch ref.kind {
		case refPath:
			if !pathExists(ref.text) {
				t.Errorf("architecture.md:%d: path %q does not exist", ref.line, ref.text)
			}
		case refFile:
			if !fileInFolders(ref.text, ref.folders, files) {
				where := "anywhere in the repository"
				if len(ref.folders) > 0 {
					where = "in " + strings.Join(ref.folders, ", ")
				}
				t.Errorf("architecture.md:%d: file %q is not %s", ref.line, ref.text, where)
			}
		case refSymbol:
			if msg := idx.resolve(ref.parts, ref.strict); msg != "" {
				t.Errorf("architecture.md:%d: %s: %s", ref.line, ref.text, msg)
			}
		}
	}
	t.Logf("checked %d paths, %d file names and %d symbols", count[refPath], count[refFile], count[refSymbol])
}

// TestDocLinksResolve fails for every relative link in README.md and
// docs/*.md whose file is missing, or whose #heading is not a heading of
// that file.
func TestDocLinksResolve(t *testing.T) {
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join(repoRoot, "README.md"))
	linkRe := regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	anchors := map[string][]string{}
	anchorsOf := func(path string) []string {
		if a, ok := anchors[path]; ok {
			return a
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		anchors[path] = headingAnchors(string(b))
		return anchors[path]
	}
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range proseLines(string(b)) {
			line = inlineRe.ReplaceAllString(line, "``")
			for _, m := range linkRe.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				path := page
				if file != "" {
					path = filepath.Join(filepath.Dir(page), file)
				}
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s:%d: link %q: %s is missing", page, n+1, target, path)
					continue
				}
				if anchor != "" && strings.HasSuffix(path, ".md") && !slices.Contains(anchorsOf(path), anchor) {
					t.Errorf("%s:%d: link %q: no heading %q in %s", page, n+1, target, anchor, path)
				}
			}
		}
	}
}

type refKind int

const (
	refPath refKind = iota
	refFile
	refSymbol
)

// ref is one thing the page names.
type ref struct {
	kind    refKind
	line    int
	text    string
	folders []string // refFile: the folders its line names
	parts   []string // refSymbol: package, name, and method or field
	strict  bool     // refSymbol: written in backticks, so its package must be known
}

// references lists every path, file and symbol the page names, in order.
func references(page string) []ref {
	var refs []ref
	inCode := false
	for n, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inCode = !inCode
			continue
		}
		if inCode {
			refs = append(refs, codeReferences(line, n+1)...)
			continue
		}
		var words []string
		for _, m := range inlineRe.FindAllStringSubmatch(line, -1) {
			words = append(words, strings.TrimSpace(m[1]))
		}
		folders := foldersNamed(words)
		for _, w := range words {
			switch {
			case strings.ContainsAny(w, " \t"):
			case isRepoPath(w):
				refs = append(refs, ref{kind: refPath, line: n + 1, text: w})
			case isFileName(w):
				refs = append(refs, ref{kind: refFile, line: n + 1, text: w, folders: folders})
			default:
				if m := symbolRe.FindStringSubmatch(w); m != nil {
					refs = append(refs, ref{kind: refSymbol, line: n + 1, text: w, parts: nonEmpty(m[1:]), strict: true})
				}
			}
		}
	}
	return refs
}

// codeReferences lists the paths, bare file names and exported symbols of
// one line of a code block.
func codeReferences(line string, n int) []ref {
	var refs, paths []ref
	for _, m := range codePathRe.FindAllStringSubmatch(line, -1) {
		p := strings.TrimRight(m[1], ".,:;")
		paths = append(paths, ref{kind: refPath, line: n, text: p})
	}
	var words []string
	for _, p := range paths {
		words = append(words, p.text)
	}
	folders := foldersNamed(words)
	rest := codePathRe.ReplaceAllString(line, " ")
	for _, m := range codeFileRe.FindAllStringSubmatch(rest, -1) {
		refs = append(refs, ref{kind: refFile, line: n, text: m[1], folders: folders})
	}
	for _, m := range codeSymbolRe.FindAllStringSubmatch(rest, -1) {
		refs = append(refs, ref{kind: refSymbol, line: n, text: strings.Join(nonEmpty(m[1:]), "."), parts: nonEmpty(m[1:])})
	}
	return append(paths, refs...)
}

func nonEmpty(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func isRepoPath(w string) bool {
	first, _, ok := strings.Cut(w, "/")
	return ok && slices.Contains(roots, first)
}

func isFileName(w string) bool {
	if strings.HasPrefix(w, "/") || strings.HasPrefix(w, ".") || strings.Contains(w, ":") {
		return false
	}
	for _, ext := range fileExts {
		if strings.HasSuffix(w, ext) {
			return true
		}
	}
	return false
}

// foldersNamed are the folders a line names: its repository paths that
// are folders, the folders of its repository paths that are files, and
// its bare top-level folder names (`migrations`).
func foldersNamed(words []string) []string {
	var out []string
	for _, w := range words {
		switch {
		case slices.Contains(roots, strings.TrimSuffix(w, "/")):
			out = append(out, strings.TrimSuffix(w, "/"))
		case isRepoPath(w):
			p := strings.TrimSuffix(w, "/")
			if fi, err := os.Stat(filepath.Join(repoRoot, p)); err == nil && !fi.IsDir() || err != nil && filepath.Ext(p) != "" {
				p = filepath.Dir(p)
			}
			out = append(out, p)
		}
	}
	return out
}

// pathExists reports whether a repository path (a glob is allowed) names
// at least one file or folder.
func pathExists(p string) bool {
	matches, err := filepath.Glob(filepath.Join(repoRoot, strings.TrimSuffix(p, "/")))
	return err == nil && len(matches) > 0
}

// fileInFolders reports whether name (it may have a folder of its own,
// `locales/*.toml`) is in one of folders or, when there are none,
// anywhere among the repository's files.
func fileInFolders(name string, folders, files []string) bool {
	if len(folders) == 0 {
		want := strings.Split(name, "/")
		for _, f := range files {
			got := strings.Split(f, "/")
			if len(got) < len(want) {
				continue
			}
			match := true
			for i, w := range want {
				if ok, _ := filepath.Match(w, got[len(got)-len(want)+i]); !ok {
					match = false
				}
			}
			if match {
				return true
			}
		}
		return false
	}
	for _, f := range folders {
		if pathExists(filepath.ToSlash(filepath.Join(f, name))) {
			return true
		}
	}
	return false
}

// headingAnchors are the GitHub anchors of a Markdown page's headings.
func headingAnchors(page string) []string {
	var out []string
	seen := map[string]int{}
	drop := regexp.MustCompile(`[^\p{L}\p{N} _-]`)
	for _, line := range proseLines(page) {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		a := strings.ReplaceAll(drop.ReplaceAllString(h, ""), " ", "-")
		if k := seen[a]; k > 0 {
			out = append(out, a+"-"+strconv.Itoa(k))
		} else {
			out = append(out, a)
		}
		seen[a]++
	}
	return out
}

// proseLines are a page's lines with those inside code blocks blanked, so
// that line numbers stay those of the file.
func proseLines(page string) []string {
	lines := strings.Split(page, "\n")
	inCode := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inCode = !inCode
			lines[i] = ""
			continue
		}
		if inCode {
			lines[i] = ""
		}
	}
	return lines
}
