package main

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/beeburst/beeburst/internal/speccheck"
)

func readSchema(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile("../../charts/beeburst/values.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// Every value in values.yaml has a schema with a type and a description (helm lint checks
// the values against the schema; this checks the schema covers them all).
func TestSchemaCoversValues(t *testing.T) {
	data, err := os.ReadFile("../../charts/beeburst/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(data, &values); err != nil {
		t.Fatal(err)
	}
	schema := readSchema(t)
	definitions, _ := schema["definitions"].(map[string]any)
	var check func(path string, v any, s map[string]any)
	check = func(path string, v any, s map[string]any) {
		if ref, ok := s["$ref"].(string); ok {
			s, _ = definitions[strings.TrimPrefix(ref, "#/definitions/")].(map[string]any)
		}
		if s == nil {
			t.Errorf("%s: no schema", path)
			return
		}
		if s["type"] == nil && s["oneOf"] == nil && s["$ref"] == nil {
			t.Errorf("%s: schema without a type", path)
		}
		if d, _ := s["description"].(string); len(d) < 10 {
			t.Errorf("%s: schema without a description", path)
		}
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		props, _ := s["properties"].(map[string]any)
		for k, child := range m {
			var cs map[string]any
			if props != nil {
				cs, _ = props[k].(map[string]any)
			}
			if cs == nil {
				if ap, ok := s["additionalProperties"].(map[string]any); ok {
					cs = ap
				}
			}
			check(path+"."+k, child, cs)
		}
	}
	check("values", values, schema)
}

// The schema's patterns are the operator's own: what helm accepts, the manager accepts.
func TestSchemaAgreesWithSpeccheck(t *testing.T) {
	s := readSchema(t)
	props := s["properties"].(map[string]any)
	if p := props["agentImage"].(map[string]any)["pattern"]; p != speccheck.ImagePattern {
		t.Errorf("agentImage pattern %q, want speccheck.ImagePattern", p)
	}
	item := props["storage"].(map[string]any)["properties"].(map[string]any)["allowedRoots"].(map[string]any)["items"].(map[string]any)
	if item["pattern"] != speccheck.HostPathPattern {
		t.Errorf("allowedRoots pattern %q, want speccheck.HostPathPattern", item["pattern"])
	}
	var not []*regexp.Regexp
	var notEnum []any
	for _, alt := range item["not"].(map[string]any)["anyOf"].([]any) {
		a := alt.(map[string]any)
		if p, ok := a["pattern"].(string); ok {
			not = append(not, regexp.MustCompile(p))
		}
		if e, ok := a["enum"].([]any); ok {
			notEnum = append(notEnum, e...)
		}
	}
	refused := func(root string) bool {
		return slices.Contains(notEnum, any(root)) || slices.ContainsFunc(not, func(re *regexp.Regexp) bool { return re.MatchString(root) })
	}
	for _, root := range []string{"/mnt", "/scratch", "/local", "/nvme", "/var/lib/beeburst", "/mnt/nvme0", "/var/tmp", "/etcetera", "/usrlocal"} {
		_, err := speccheck.ParseRoots(root)
		if (err == nil) == refused(root) {
			t.Errorf("%s: the manager says %v, the schema refuses: %v", root, err, refused(root))
		}
	}
	for _, d := range append(append([]string{}, speccheck.SystemDirs...), speccheck.SystemParents...) {
		for _, root := range []string{d, d + "/x"} {
			if _, err := speccheck.ParseRoots(root); (err != nil) != refused(root) {
				t.Errorf("%s: the manager says %v, the schema refuses: %v", root, err, refused(root))
			}
		}
	}
	for _, root := range []string{"/mnt/../etc", "/mnt/./x"} {
		if !refused(root) {
			t.Errorf("%s: the schema accepts it", root)
		}
	}
}
