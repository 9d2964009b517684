package v1alpha1

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestEveryReasonHasAKind: every Reason constant of this package is in reasonKinds, so the
// phase it leads to is decided where it is declared.
func TestEveryReasonHasAKind(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				vs, ok := n.(*ast.ValueSpec)
				if !ok {
					return true
				}
				for i, name := range vs.Names {
					if !strings.HasPrefix(name.Name, "Reason") || strings.HasPrefix(name.Name, "ReasonKind") || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					v, _ := strconv.Unquote(lit.Value)
					seen++
					if !IsDeclaredReason(v) {
						t.Errorf("%s = %q has no kind in reasonKinds: add it there (Progress, Attention, Degraded or Terminal)", name.Name, v)
					}
				}
				return true
			})
		}
	}
	if seen < 40 || seen != len(reasonKinds) {
		t.Errorf("found %d Reason constants, reasonKinds has %d entries: every entry must be a declared constant", seen, len(reasonKinds))
	}
}

// TestReasonsAreDeclaredOnlyHere: no other package of the operator declares a condition
// reason or sets one from a string literal.
func TestReasonsAreDeclaredOnlyHere(t *testing.T) {
	declared := regexp.MustCompile(`\bReason[A-Z][A-Za-z]*\s*=\s*"[A-Z][A-Za-z]*"`)
	literal := regexp.MustCompile(`\b(Reason|reason)\s*(=|:)\s*"[A-Z][a-z]+[A-Z][A-Za-z]*"`)
	root := filepath.Join("..", "..")
	for _, dir := range []string{"controllers", "internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for i, line := range strings.Split(string(b), "\n") {
				if declared.MatchString(line) || literal.MatchString(line) {
					t.Errorf("%s:%d declares or sets a condition reason outside api/v1alpha1: %s", path, i+1, strings.TrimSpace(line))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestTerminalReasons(t *testing.T) {
	for _, r := range []string{ReasonPortShiftExhausted, ReasonSecretConflict, ReasonClientModuleMissing, ReasonPrepareFailed, ReasonStageFailed} {
		if KindOf(r) != ReasonKindTerminal {
			t.Errorf("%s must be terminal", r)
		}
	}
	if len(ReasonsOfKind(ReasonKindTerminal)) == 0 || KindOf("NoSuchReason") != ReasonKindProgress {
		t.Error("ReasonsOfKind/KindOf")
	}
}

// IsDeclaredReason says whether reason is declared above.
func IsDeclaredReason(reason string) bool {
	_, ok := reasonKinds[reason]
	return ok
}
