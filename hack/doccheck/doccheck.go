// Package doccheck holds repository checks of the documentation (see its tests): the Go
// identifiers, API fields and file paths that docs/architecture.md names in backticks exist,
// and every relative link of README.md and docs/ reaches a file (and a heading) that exists.
package doccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Span is one inline code span of a Markdown file (not inside a fenced block).
type Span struct {
	Line int
	Text string
}

var codeSpan = regexp.MustCompile("`([^`]+)`")

// Spans lists the inline code spans of a Markdown text.
func Spans(md string) []Span {
	var out []Span
	fenced := false
	for i, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
			out = append(out, Span{Line: i + 1, Text: m[1]})
		}
	}
	return out
}

// Index is what the module declares: the names a document may refer to.
type Index struct {
	// Packages maps a package name to the names it declares at top level.
	Packages map[string]map[string]bool
	// Types maps a type name to its fields and methods (interface methods included).
	Types map[string]map[string]bool
	// Names are every declared name: top level, fields, methods.
	Names map[string]bool
	// Strings are the values of the module's string constants ("quick", "ExceedsLimit").
	Strings map[string]bool
	// JSON are the field names of the API's types (their json tags).
	JSON map[string]bool
}

// Load parses the module's non-test Go files below root (skipping bin/, testdata/ and hidden
// directories) into an Index. The JSON field names come from api/.
func Load(root string) (*Index, error) {
	ix := &Index{Packages: map[string]map[string]bool{}, Types: map[string]map[string]bool{}, Names: map[string]bool{}, Strings: map[string]bool{}, JSON: map[string]bool{}}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "bin" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		ix.add(f, strings.HasPrefix(filepath.ToSlash(rel), "api/"))
		return nil
	})
	return ix, err
}

func (ix *Index) add(f *ast.File, api bool) {
	pkg := ix.Packages[f.Name.Name]
	if pkg == nil {
		pkg = map[string]bool{}
		ix.Packages[f.Name.Name] = pkg
	}
	member := func(typ, name string) {
		if ix.Types[typ] == nil {
			ix.Types[typ] = map[string]bool{}
		}
		ix.Types[typ][name] = true
		ix.Names[name] = true
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			ix.Names[d.Name.Name] = true
			if d.Recv != nil && len(d.Recv.List) == 1 {
				member(receiverType(d.Recv.List[0].Type), d.Name.Name)
			} else {
				pkg[d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					pkg[s.Name.Name] = true
					ix.Names[s.Name.Name] = true
					if ix.Types[s.Name.Name] == nil {
						ix.Types[s.Name.Name] = map[string]bool{}
					}
					switch t := s.Type.(type) {
					case *ast.StructType:
						for _, fld := range t.Fields.List {
							for _, n := range fld.Names {
								member(s.Name.Name, n.Name)
							}
							if len(fld.Names) == 0 { // embedded: its type's name is the field's
								member(s.Name.Name, receiverType(fld.Type))
							}
							if api && fld.Tag != nil {
								tag, _ := strconv.Unquote(fld.Tag.Value)
								if j := strings.Split(reflect.StructTag(tag).Get("json"), ",")[0]; j != "" && j != "-" {
									ix.JSON[j] = true
								}
							}
						}
					case *ast.InterfaceType:
						for _, m := range t.Methods.List {
							for _, n := range m.Names {
								member(s.Name.Name, n.Name)
							}
						}
					}
				case *ast.ValueSpec:
					for i, n := range s.Names {
						pkg[n.Name] = true
						ix.Names[n.Name] = true
						if d.Tok == token.CONST && i < len(s.Values) {
							if lit, ok := s.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
								v, _ := strconv.Unquote(lit.Value)
								ix.Strings[v] = true
							}
						}
					}
				}
			}
		}
	}
}

// receiverType is the name of a receiver's or an embedded field's type: T, *T, T[P], pkg.T.
func receiverType(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return receiverType(t.X)
	case *ast.IndexExpr:
		return receiverType(t.X)
	case *ast.IndexListExpr:
		return receiverType(t.X)
	case *ast.SelectorExpr:
		return t.Sel.Name
	case *ast.Ident:
		return t.Name
	}
	return ""
}

var (
	identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)
	pathLike   = regexp.MustCompile(`^[A-Za-z0-9_.][A-Za-z0-9_./-]*$`)
	fileExts   = []string{".go", ".md", ".yaml", ".yml", ".sh", ".json", ".txt", ".csv", ".png", ".mod", ".tpl"}
	goWords    = map[string]bool{"func": true, "chan": true, "map": true, "struct": true, "interface": true}
	apiRoots   = map[string]bool{"spec": true, "status": true}
)

// Problem is a reference a document makes that the repository does not hold.
type Problem struct {
	Line int
	Text string
	Why  string
}

// References checks the spans of a document against the repository at root: a path must
// exist; a Go identifier, a pkg.Name or Type.Member must be declared; spec.x.y and
// status.x.y must be API fields; a single word must be declared, a string constant's value,
// an API field or a file's name. Spans with spaces, placeholders (<...>) or punctuation other
// than '.', '/', '-' and '_' are prose, not references.
func References(root, doc string, ix *Index) ([]Problem, error) {
	b, err := os.ReadFile(doc)
	if err != nil {
		return nil, err
	}
	files := map[string]bool{}
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "bin") {
			return filepath.SkipDir
		}
		if err == nil {
			files[d.Name()] = true
		}
		return nil
	})
	var out []Problem
	for _, s := range Spans(string(b)) {
		text := s.Text
		// A call in a span names its function: `r.measuring(r.reconcileSweep)`.
		if i := strings.Index(text, "("); i > 0 && identifier.MatchString(text[:i]) {
			text = text[:i]
		}
		text = strings.TrimPrefix(text, "r.")
		var why string
		switch {
		case isPath(text):
			why = checkPath(root, filepath.Dir(doc), text, files)
		case identifier.MatchString(text):
			why = checkIdentifier(text, ix, files)
		}
		if why != "" {
			out = append(out, Problem{Line: s.Line, Text: s.Text, Why: why})
		}
	}
	return out, nil
}

func isPath(s string) bool {
	if !pathLike.MatchString(s) || strings.HasPrefix(s, ".") {
		return false
	}
	if strings.Contains(s, "/") {
		return true
	}
	for _, ext := range fileExts {
		if strings.HasSuffix(s, ext) {
			return true
		}
	}
	return false
}

func checkPath(root, docDir, p string, files map[string]bool) string {
	clean := strings.TrimSuffix(p, "/")
	for _, base := range []string{root, docDir} {
		if _, err := os.Stat(filepath.Join(base, clean)); err == nil {
			return ""
		}
	}
	if !strings.Contains(clean, "/") && files[clean] {
		return "" // a file named by its base name, e.g. `phases.go` beside `controllers/`
	}
	return "no such file or directory in the repository"
}

func checkIdentifier(s string, ix *Index, files map[string]bool) string {
	parts := strings.Split(s, ".")
	if apiRoots[parts[0]] {
		for _, p := range parts[1:] {
			if !ix.JSON[p] {
				return "no API field " + p + " (json tag in api/)"
			}
		}
		return ""
	}
	if len(parts) == 1 {
		w := parts[0]
		if goWords[w] || ix.Names[w] || ix.Strings[w] || ix.JSON[w] || ix.Packages[w] != nil || files[w] {
			return ""
		}
		return "declared nowhere: not a Go name, a string constant, an API field or a file"
	}
	x, y := parts[0], parts[1]
	if pkg := ix.Packages[x]; pkg != nil {
		if pkg[y] || (len(parts) > 2 && ix.Types[y] != nil) {
			return ""
		}
		if m := ix.Types[x]; m != nil && m[y] {
			return "" // a type of the same name as a package: engine.Engine's methods
		}
		return "package " + x + " declares no " + y
	}
	if m := ix.Types[x]; m != nil {
		if m[y] {
			return ""
		}
		return "type " + x + " has no field or method " + y
	}
	// Not Go: an API path written from a field of the spec (`layout.chunkSizePolicy`).
	for _, p := range parts {
		if !ix.JSON[p] && !isLowerWord(p) {
			return "neither a package, a type, nor an API field path"
		}
	}
	for _, p := range parts {
		if !ix.JSON[p] {
			return "no API field " + p + " (json tag in api/)"
		}
	}
	return ""
}

func isLowerWord(s string) bool {
	for _, r := range s {
		if !unicode.IsLower(r) {
			return false
		}
	}
	return true
}

// placed is a name followed by the file said to hold it: "`reconcileNetwork` (`network.go`"
// or "`reconcileComparisonVerdict` in `compareverdict.go`".
var placed = regexp.MustCompile("`([A-Za-z_][A-Za-z0-9_.]*)`\\s+(?:\\(|in\\s+)`([A-Za-z0-9_./-]+\\.go)`")

// Misplaced checks that every name a document places in a Go file ("`name` (`file.go`" or
// "`name` in `file.go`") is declared there at top level: a function, a method, a type, a
// constant or a variable. A file named by its base name may be any file of that name below
// root.
func Misplaced(root, doc string) ([]Problem, error) {
	b, err := os.ReadFile(doc)
	if err != nil {
		return nil, err
	}
	byBase := map[string][]string{}
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "bin" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".go") {
			byBase[d.Name()] = append(byBase[d.Name()], path)
		}
		return nil
	})
	text := string(b)
	var out []Problem
	for _, m := range placed.FindAllStringSubmatchIndex(text, -1) {
		name, file := text[m[2]:m[3]], text[m[4]:m[5]]
		if i := strings.LastIndex(name, "."); i >= 0 {
			name = name[i+1:] // Type.Method, pkg.Func: the declared name
		}
		candidates := byBase[file]
		if strings.Contains(file, "/") {
			candidates = []string{filepath.Join(root, file)}
		}
		found := false
		for _, c := range candidates {
			if declares(c, name) {
				found = true
				break
			}
		}
		if !found {
			line := 1 + strings.Count(text[:m[0]], "\n")
			out = append(out, Problem{Line: line, Text: text[m[0]:m[1]], Why: name + " is not declared in " + file})
		}
	}
	return out, nil
}

// declares says whether the Go file at path declares name at top level.
func declares(path, name string) bool {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return false
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Name.Name == name {
				return true
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.Name == name {
						return true
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.Name == name {
							return true
						}
					}
				}
			}
		}
	}
	return false
}
