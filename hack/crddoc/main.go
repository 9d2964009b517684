// Command crddoc rewrites the descriptions of generated CRDs so that `kubectl explain` shows
// whole sentences: controller-gen (since v0.14) keeps the hard line breaks of the Go doc
// comments, and kubectl explain word-wraps each of those lines on its own, so a sentence
// broken at column 95 in the source comes out as one full line and one stub. crddoc joins the
// lines of each paragraph with a space, the rule Kubernetes applies to its own types
// (fmtRawDoc in k8s.io/kube-openapi's generator): blank lines stay paragraph breaks, and
// lines that are indented, list items ("- ", "* ") or inside ``` fences keep their own line.
//
// `make manifests` runs it after controller-gen, in place:
//
//	go run ./hack/crddoc config/crd/bases/*.yaml
//
// It only changes descriptions; the file is otherwise written as controller-gen writes it
// (JSON through sigs.k8s.io/yaml, one "---" document), so a second run changes nothing.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"sigs.k8s.io/yaml"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: crddoc CRD.yaml...")
		os.Exit(2)
	}
	for _, file := range os.Args[1:] {
		if err := rewrite(file); err != nil {
			fmt.Fprintf(os.Stderr, "crddoc: %s: %v\n", file, err)
			os.Exit(1)
		}
	}
}

func rewrite(file string) error {
	in, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	out, err := Reflow(in)
	if err != nil {
		return err
	}
	if bytes.Equal(in, out) {
		return nil
	}
	return os.WriteFile(file, out, 0o644)
}

// Reflow rewrites every description below the CRD's schemas (and its printer columns') and
// returns the document in controller-gen's layout.
func Reflow(in []byte) ([]byte, error) {
	body := bytes.TrimPrefix(in, []byte("---\n"))
	if bytes.Contains(body, []byte("\n---\n")) {
		return nil, fmt.Errorf("one CRD per file expected, as controller-gen writes them")
	}
	j, err := yaml.YAMLToJSON(body)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber() // bounds such as 1e17 stay the integers they are
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	if doc["kind"] != "CustomResourceDefinition" {
		return nil, fmt.Errorf("kind is %v, not CustomResourceDefinition", doc["kind"])
	}
	walk(doc, false)
	j, err = json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	y, err := yaml.JSONToYAML(j)
	if err != nil {
		return nil, err
	}
	return append([]byte("---\n"), y...), nil
}

// walk reflows the "description" strings of schemas: inside openAPIV3Schema every map may
// be a schema (properties, items, additionalProperties, ...), and additionalPrinterColumns
// carry one each. A property that is itself named "description" is a schema, not a string,
// and is walked, not reflowed.
func walk(v any, inSchema bool) {
	switch t := v.(type) {
	case map[string]any:
		for k, child := range t {
			if s, ok := child.(string); ok && k == "description" && inSchema {
				t[k] = ReflowText(s)
				continue
			}
			walk(child, inSchema || k == "openAPIV3Schema" || k == "additionalPrinterColumns")
		}
	case []any:
		for _, child := range t {
			walk(child, inSchema)
		}
	}
}

// ReflowText joins the lines of each paragraph of a doc comment into one line. Blank lines
// separate paragraphs; list items start a line of their own, and a list item's continuation
// lines (indented to the item's text, as gofmt writes doc-comment lists) join it; other
// indented lines and fenced code keep their line breaks.
func ReflowText(s string) string {
	lines := strings.Split(s, "\n")
	var out strings.Builder
	fenced := false
	joinable := false // the previous line is prose that the next prose line may join
	itemIndent := -1  // the text column of the list item being continued, -1 outside one
	for i, line := range lines {
		trimmed := strings.TrimRight(line, " \t")
		fence := strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")
		body := strings.TrimLeft(trimmed, " \t")
		indent := len(trimmed) - len(body)
		bullet := strings.HasPrefix(body, "- ") || strings.HasPrefix(body, "* ")
		continuation := !fenced && !fence && body != "" && !bullet && itemIndent >= 0 && indent == itemIndent
		ownLine := fenced || fence || trimmed == "" || (indent > 0 && !continuation) || bullet
		switch {
		case i == 0:
		case continuation:
			out.WriteByte(' ')
		case joinable && !ownLine:
			out.WriteByte(' ')
		default:
			out.WriteByte('\n')
		}
		switch {
		case fenced || fence:
			out.WriteString(line)
		case continuation:
			out.WriteString(body)
		default:
			out.WriteString(trimmed)
		}
		if fence {
			fenced = !fenced
		}
		switch {
		case bullet && !fenced:
			itemIndent = indent + 2
		case trimmed == "" || fence || (!continuation && indent == 0):
			itemIndent = -1
		}
		// A list item's continuation lines join it; a blank line, a fence or code does not
		// take the next line.
		joinable = !fenced && !fence && trimmed != "" && (indent == 0 || continuation || bullet)
	}
	return out.String()
}
