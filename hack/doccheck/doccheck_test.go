package doccheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const root = "../.."

// TestArchitectureNamesWhatExists: every Go identifier, API field and file path that
// docs/architecture.md names in backticks exists, so a rename or a removal that leaves the
// page behind fails `make test-unit`.
func TestArchitectureNamesWhatExists(t *testing.T) {
	ix, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	doc := filepath.Join(root, "docs", "architecture.md")
	problems, err := References(root, doc, ix)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("docs/architecture.md:%d: `%s`: %s", p.Line, p.Text, p.Why)
	}
	if n := len(Spans(mustRead(t, doc))); n < 100 {
		t.Errorf("found %d code spans in docs/architecture.md; the span parser is broken", n)
	}
}

// TestReferencesFailOnWhatIsGone: the check itself, on a document naming things that exist
// and things that do not.
func TestReferencesFailOnWhatIsGone(t *testing.T) {
	ix, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	doc := filepath.Join(t.TempDir(), "doc.md")
	good := "`controllers/claim.go` `claim.go` `reconcileVolume` `claim.Volume` `BurstBufferReconciler.Reconcile` " +
		"`scope.measuring` `r.measuring(r.reconcileSweep)` `status.taskNamespace` `spec.workload.claimName` " +
		"`layout.chunkSizePolicy` `ExceedsLimit` `quick` `internal/claim` `kubectl apply` `<storage.path>/beeburst`\n" +
		"```\n`reconcileNothing`\n```\n"
	bad := "`controllers/gone.go` `gone.go` `reconcileNothing` `claim.Nothing` `BurstBufferReconciler.Nothing` " +
		"`status.noSuchField` `NoSuchReason` `internal/nothing`\n"
	if err := os.WriteFile(doc, []byte(good+bad), 0o644); err != nil {
		t.Fatal(err)
	}
	problems, err := References(root, doc, ix)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.Text)
	}
	want := []string{"controllers/gone.go", "gone.go", "reconcileNothing", "claim.Nothing", "BurstBufferReconciler.Nothing", "status.noSuchField", "NoSuchReason", "internal/nothing"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("problems:\n got %q\nwant %q", got, want)
	}
}

var (
	mdLink  = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading = regexp.MustCompile(`^#{1,6}\s+(.*)$`)
)

// TestLinksReachFiles: every relative link of README.md and docs/*.md reaches a file of the
// repository, and a link to a heading (file.md#anchor) reaches a heading of that file.
func TestLinksReachFiles(t *testing.T) {
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	docs = append(docs, filepath.Join(root, "README.md"), filepath.Join(root, "CHANGELOG.md"))
	for _, doc := range docs {
		fenced := false
		for i, line := range strings.Split(mustRead(t, doc), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fenced = !fenced
			}
			if fenced {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				path := doc
				if file != "" {
					path = filepath.Join(filepath.Dir(doc), file)
				}
				rel, _ := filepath.Rel(root, doc)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s:%d: link %s: no such file", rel, i+1, target)
					continue
				}
				if anchor != "" && strings.HasSuffix(path, ".md") && !anchors(t, path)[anchor] {
					t.Errorf("%s:%d: link %s: no heading with anchor #%s in %s", rel, i+1, target, anchor, filepath.Base(path))
				}
			}
		}
	}
}

// anchors are the GitHub anchors of a Markdown file's headings.
func anchors(t *testing.T, path string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(mustRead(t, path), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
		}
		m := heading.FindStringSubmatch(line)
		if fenced || m == nil {
			continue
		}
		a := slug(m[1])
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// slug is GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestArchitecturePlacesNamesInTheirFiles: a name docs/architecture.md places in a file
// ("`reconcileNetwork` (`network.go`") is declared in that file, so moving a function out of
// the file the page names fails `make test-unit`.
func TestArchitecturePlacesNamesInTheirFiles(t *testing.T) {
	problems, err := Misplaced(root, filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("docs/architecture.md:%d: %s: %s", p.Line, p.Text, p.Why)
	}
}

// TestMisplacedFailsOnAMovedName: the check itself.
func TestMisplacedFailsOnAMovedName(t *testing.T) {
	doc := filepath.Join(t.TempDir(), "doc.md")
	md := "`reconcileVolume` (`claim.go`) and `BurstBufferReconciler.Reconcile` in\n  `controllers/burstbuffer_controller.go`; " +
		"`reconcileVolume` (`phases.go`), `reconcileNothing` in `claim.go`\n"
	if err := os.WriteFile(doc, []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	problems, err := Misplaced(root, doc)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.Why)
	}
	want := "reconcileVolume is not declared in phases.go; reconcileNothing is not declared in claim.go"
	if strings.Join(got, "; ") != want {
		t.Errorf("problems %q, want %q", got, want)
	}
}
