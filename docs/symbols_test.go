package docs

// The look-up of package-qualified Go symbols for the architecture test:
// each package named in the page is parsed once, by the name in its
// package clause.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// packageIndex finds the declarations of the module's packages by the
// name in their package clause, parsing a package only once it is asked
// about.
type packageIndex struct {
	t      *testing.T
	dirs   map[string][]string // package name -> folders
	parsed map[string]*decls
}

// decls are one package's top-level names, and per type its methods and
// fields.
type decls struct {
	top     map[string]bool
	members map[string]map[string]bool
}

func newPackageIndex(t *testing.T, files []string) *packageIndex {
	idx := &packageIndex{t: t, dirs: map[string][]string{}, parsed: map[string]*decls{}}
	fset := token.NewFileSet()
	seen := map[string]bool{}
	for _, f := range files {
		dir := filepath.Join(repoRoot, filepath.Dir(f))
		if !strings.HasSuffix(f, ".go") || strings.HasSuffix(f, "_test.go") || seen[dir] || strings.Contains(f, "testdata/") {
			continue
		}
		// Every non-test file of a folder names the same package: the
		// first one says which.
		seen[dir] = true
		file, err := parser.ParseFile(fset, filepath.Join(repoRoot, f), nil, parser.PackageClauseOnly)
		if err != nil {
			t.Fatal(err)
		}
		idx.dirs[file.Name.Name] = append(idx.dirs[file.Name.Name], dir)
	}
	return idx
}

// repoFiles are the repository's files, as slash paths from its root,
// without hidden folders and node_modules.
func repoFiles(t *testing.T) []string {
	var files []string
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != repoRoot && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(repoRoot, path)
		if err != nil {
			return err
		}
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// resolve says what is wrong with a symbol, or "" when it is declared in
// some package of that name: pkg.Name at top level, pkg.Type.Member as a
// method, field or interface method of Type.
func (idx *packageIndex) resolve(parts []string, strict bool) string {
	pkg, name := parts[0], parts[1]
	dirs, ok := idx.dirs[pkg]
	if !ok {
		if strict && ast.IsExported(name) && !slices.Contains(externalPackages, pkg) {
			return "no package " + pkg + " in this module"
		}
		return ""
	}
	for _, dir := range dirs {
		d := idx.decls(dir)
		if !d.top[name] {
			continue
		}
		if len(parts) == 2 || d.members[name][parts[2]] {
			return ""
		}
	}
	if len(parts) == 3 {
		return "no " + name + "." + parts[2] + " in package " + pkg + " (" + strings.Join(dirs, ", ") + ")"
	}
	return "no top-level " + name + " in package " + pkg + " (" + strings.Join(dirs, ", ") + ")"
}

func (idx *packageIndex) decls(dir string) *decls {
	if d, ok := idx.parsed[dir]; ok {
		return d
	}
	d := &decls{top: map[string]bool{}, members: map[string]map[string]bool{}}
	member := func(typ, name string) {
		if d.members[typ] == nil {
			d.members[typ] = map[string]bool{}
		}
		d.members[typ][name] = true
	}
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		idx.t.Fatal(err)
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			idx.t.Fatal(err)
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				if decl.Recv == nil {
					d.top[decl.Name.Name] = true
				} else if typ := receiverType(decl.Recv.List[0].Type); typ != "" {
					member(typ, decl.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					switch spec := spec.(type) {
					case *ast.ValueSpec:
						for _, n := range spec.Names {
							d.top[n.Name] = true
						}
					case *ast.TypeSpec:
						d.top[spec.Name.Name] = true
						for _, m := range typeMembers(spec.Type) {
							member(spec.Name.Name, m)
						}
					}
				}
			}
		}
	}
	idx.parsed[dir] = d
	return d
}

// receiverType is the name of a method's receiver type, without pointer
// or type parameters.
func receiverType(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return receiverType(e.X)
	case *ast.IndexExpr:
		return receiverType(e.X)
	case *ast.IndexListExpr:
		return receiverType(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}

// typeMembers are a struct's field names or an interface's method names.
func typeMembers(e ast.Expr) []string {
	var list *ast.FieldList
	switch e := e.(type) {
	case *ast.StructType:
		list = e.Fields
	case *ast.InterfaceType:
		list = e.Methods
	default:
		return nil
	}
	var out []string
	for _, f := range list.List {
		for _, n := range f.Names {
			out = append(out, n.Name)
		}
		if len(f.Names) == 0 {
			out = append(out, receiverType(f.Type)) // an embedded field
		}
	}
	return out
}
