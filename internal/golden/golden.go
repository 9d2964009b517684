// Package golden compares rendered output with files under a package's testdata/, the way the
// builders of child objects are tested: `go test ./PKG -update` rewrites the files, and the
// diff is reviewed like code.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// Assert compares got with testdata/name.
func Assert(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; run go test with -update and review the diff.\ngot:\n%s", path, got)
	}
}

// YAML renders objects as one YAML stream, each document after a "---" line: the form of the
// golden files of Kubernetes objects.
func YAML(t *testing.T, objs ...any) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, o := range objs {
		y, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	return b.Bytes()
}
