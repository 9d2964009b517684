package v1alpha1

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// troubleshootingDoc is the page that says, for every reason, what it means and what to do.
var troubleshootingDoc = filepath.Join("..", "..", "docs", "troubleshooting.md")

// docRow is a table row whose first cell is a reason in backticks: "| `ProbeFailed` | ...".
var docRow = regexp.MustCompile("^\\|\\s*`([A-Z][A-Za-z]*)`\\s*\\|")

// TestEveryReasonIsInTheTroubleshootingDoc: a reason or warning a user can meet in the status
// has a row in docs/troubleshooting.md, and every row there names one that still exists.
func TestEveryReasonIsInTheTroubleshootingDoc(t *testing.T) {
	b, err := os.ReadFile(troubleshootingDoc)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if m := docRow.FindStringSubmatch(line); m != nil {
			rows[m[1]] = true
		}
	}

	declared := map[string]bool{}
	for r := range reasonKinds {
		declared[r] = true
	}
	for _, w := range warningReasons(t) {
		declared[w] = true
	}
	var missing []string
	for r := range declared {
		if !rows[r] {
			missing = append(missing, r)
		}
	}
	sort.Strings(missing)
	for _, r := range missing {
		t.Errorf("reason %s is declared in api/v1alpha1 but has no row in docs/troubleshooting.md: add \"| `%s` | kind | what it means | what to do |\" to the table of its condition", r, r)
	}

	// Rows that are neither a declared reason nor a warning must be the events the
	// operator records without a condition (the last table of the page).
	events := map[string]bool{"BurstBufferReady": true, "ReleaseRefused": true, "TeardownStarted": true, "NothingToRemove": true, "DataLeftOnNode": true}
	var stale []string
	for r := range rows {
		if !declared[r] && !events[r] {
			stale = append(stale, r)
		}
	}
	sort.Strings(stale)
	for _, r := range stale {
		t.Errorf("docs/troubleshooting.md has a row for %s, which api/v1alpha1 no longer declares: remove or rename it", r)
	}
}

// warningReasons are the values of the Warning* constants of this package (status.warnings).
func warningReasons(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				vs, ok := n.(*ast.ValueSpec)
				if !ok {
					return true
				}
				for i, name := range vs.Names {
					if !strings.HasPrefix(name.Name, "Warning") || i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						v, _ := strconv.Unquote(lit.Value)
						out = append(out, v)
					}
				}
				return true
			})
		}
	}
	if len(out) < 8 {
		t.Fatalf("found %d Warning constants in api/v1alpha1; the parser missed them", len(out))
	}
	return out
}
