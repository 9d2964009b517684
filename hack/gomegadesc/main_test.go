// Package gomegadesc checks the repository's Gomega assertions: an assertion's optional
// description is a format string when it is a string followed by nothing else, so a message
// passed alone (`To(Succeed(), c.Message)`) prints "%!a(MISSING)" wherever the message holds a
// percent sign. Such a description must be a literal or a "%s", msg pair.
package gomegadesc

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var assertions = map[string]bool{"To": true, "ToNot": true, "NotTo": true, "Should": true, "ShouldNot": true}

// loneDescriptions lists the assertions in the Go files below root whose one description
// argument is not a string literal (nor a func() string, which Gomega calls).
func loneDescriptions(t *testing.T, root string) []string {
	t.Helper()
	var found []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "bin" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 2 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || !assertions[sel.Sel.Name] {
				return true
			}
			switch a := call.Args[1].(type) {
			case *ast.BasicLit:
				if !strings.Contains(a.Value, "%") {
					return true
				}
			case *ast.FuncLit:
				return true
			}
			found = append(found, fset.Position(call.Pos()).String())
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func TestNoLoneDescriptions(t *testing.T) {
	for _, at := range loneDescriptions(t, "../..") {
		t.Errorf("%s: a lone assertion description is a format string; write it as \"%%s\", x", at)
	}
}

func TestFindsLoneDescriptions(t *testing.T) {
	dir := t.TempDir()
	src := `package x
func f() {
	Expect(a).To(Equal(b), msg)
	Expect(a).To(Equal(b), "%s", msg)
	Expect(a).To(Equal(b), "plain")
	Expect(a).To(Equal(b), "50%")
	Eventually(f).Should(Succeed(), func() string { return msg })
}
`
	if err := writeFile(filepath.Join(dir, "x_test.go"), src); err != nil {
		t.Fatal(err)
	}
	got := loneDescriptions(t, dir)
	if len(got) != 2 || !strings.HasSuffix(got[0], ":3:2") || !strings.HasSuffix(got[1], ":6:2") {
		t.Fatalf("found %v, want lines 3 and 6", got)
	}
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }
