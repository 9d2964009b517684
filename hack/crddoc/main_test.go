package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestReflowText(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"one line", "nodes selects the nodes.", "nodes selects the nodes."},
		{"a sentence over two lines", "hardware holds documented figures for stage 1 (theory from the\nhardware). Everything is optional.",
			"hardware holds documented figures for stage 1 (theory from the hardware). Everything is optional."},
		{"paragraphs stay", "First paragraph,\nstill the first.\n\nSecond\nparagraph.", "First paragraph, still the first.\n\nSecond paragraph."},
		{"trailing spaces", "a  \nb", "a b"},
		{"list items keep their lines, continuations join them", "Phases:\n- Pending: waiting\n  for nodes\n- Ready\n* other\nThen prose.",
			"Phases:\n- Pending: waiting for nodes\n- Ready\n* other Then prose."},
		{"indented code", "Example:\n\tspec:\n\t  engine: local\nDone\nhere.", "Example:\n\tspec:\n\t  engine: local\nDone here."},
		{"fenced code", "Example:\n```yaml\nspec:\n  engine: local\n```\nthen\nmore.", "Example:\n```yaml\nspec:\n  engine: local\n```\nthen more."},
		{"Kubernetes' own", "Kind is a string value representing the REST resource this object represents.\nServers may infer this.\nCannot be updated.\nIn CamelCase.\nMore info: https://x",
			"Kind is a string value representing the REST resource this object represents. Servers may infer this. Cannot be updated. In CamelCase. More info: https://x"},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ReflowText(tc.in); got != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func TestReflowCRD(t *testing.T) {
	in := []byte(`---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.example.io
spec:
  group: example.io
  versions:
  - additionalPrinterColumns:
    - description: |-
        a column
        described
      jsonPath: .status.x
      name: X
      type: string
    name: v1
    schema:
      openAPIV3Schema:
        description: |-
          Thing is a thing
          of things.
        properties:
          description:
            description: |-
              description is a field
              named description.
            type: string
          size:
            maximum: 100000000000000000
            type: integer
        type: object
    served: true
    storage: true
`)
	out, err := Reflow(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"description: Thing is a thing of things.\n", "description: description is a field named description.\n",
		"description: a column described\n", "maximum: 100000000000000000\n", "group: example.io\n"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	again, err := Reflow(out)
	if err != nil || !bytes.Equal(again, out) {
		t.Errorf("a second run changed the file (%v):\n%s", err, again)
	}
	for _, bad := range []string{"---\nkind: ConfigMap\n", "---\nkind: CustomResourceDefinition\n---\nkind: CustomResourceDefinition\n", "---\n: :\n"} {
		if _, err := Reflow([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// The committed CRD went through crddoc: no description breaks a paragraph's line, and
// running crddoc on it changes nothing (make verify checks the same from the other side).
func TestCommittedCRD(t *testing.T) {
	in, err := os.ReadFile("../../config/crd/bases/beeburst.io_burstbuffers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out, err := Reflow(in)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(in, out) {
		t.Error("config/crd/bases is not reflowed: run make manifests")
	}
	var crd map[string]any
	if err := yaml.Unmarshal(in, &crd); err != nil {
		t.Fatal(err)
	}
	n := 0
	var check func(v any)
	check = func(v any) {
		switch t2 := v.(type) {
		case map[string]any:
			for k, c := range t2 {
				if s, ok := c.(string); ok && k == "description" {
					n++
					for _, para := range strings.Split(s, "\n\n") {
						// A line break may only start a list item.
						for _, line := range strings.Split(para, "\n")[1:] {
							if b := strings.TrimLeft(line, " "); !strings.HasPrefix(b, "- ") && !strings.HasPrefix(b, "* ") {
								t.Errorf("description with a line break inside a paragraph: %q", s)
							}
						}
					}
				}
				check(c)
			}
		case []any:
			for _, c := range t2 {
				check(c)
			}
		}
	}
	check(crd)
	if n < 100 {
		t.Errorf("only %d descriptions", n)
	}
}

// A list item's continuation lines, indented to its text as gofmt writes doc-comment lists,
// join the item; the items keep their own lines.
func TestReflowJoinsListItemContinuations(t *testing.T) {
	in := "How:\n  - first item that\n    goes on here;\n  - second.\n\nProse that\ncontinues."
	want := "How:\n  - first item that goes on here;\n  - second.\n\nProse that continues."
	if got := ReflowText(in); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
