package main

import (
	"encoding/json"
	"fmt"
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
	agent := props["agentImage"].(map[string]any)
	if p := agent["if"].(map[string]any)["not"].(map[string]any)["pattern"]; p != "^$|"+speccheck.ImagePattern {
		t.Errorf("agentImage pattern %q, want empty or speccheck.ImagePattern", p)
	}
	image := regexp.MustCompile(speccheck.ImagePattern)
	for _, img := range []string{"", "beeburst/agent:dev", "ghcr.io/beeburst/agent:v0.2.0", "registry.example.com:5000/hpc/agent@sha256:" + strings.Repeat("a", 64), "Foo:bar", "a b", "agent:"} {
		// Empty is the chart's default (the release's agent), never passed to the manager.
		if want := img != "" && !image.MatchString(img); refusedBy(t, agent, img) != want {
			t.Errorf("agentImage %q: the schema refuses it: %v, want %v", img, !want, want)
		}
	}
	item := props["storage"].(map[string]any)["properties"].(map[string]any)["allowedRoots"].(map[string]any)["items"].(map[string]any)
	refused := func(root string) bool { return refusedBy(t, item, root) }
	for _, root := range []string{"/mnt", "/scratch", "/local", "/nvme", "/var/lib/beeburst", "/mnt/nvme0", "/var/tmp", "/etcetera", "/usrlocal", "mnt", "/mnt/", "/mnt//x", "/a b"} {
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

// refusedBy evaluates the schema's refusals of a string value the way this chart writes them:
// "if" (the refused values: pattern, not, anyOf, enum) "then" {"const": what is allowed},
// with an "else" that may refuse more.
func refusedBy(t *testing.T, s map[string]any, v string) bool {
	t.Helper()
	cond, ok := s["if"].(map[string]any)
	if !ok {
		t.Fatalf("schema %v has no if/then refusal", s)
	}
	if _, ok := s["then"].(map[string]any)["const"].(string); !ok {
		t.Fatalf("schema %v: then must be {const: what is allowed}", s)
	}
	if matches(t, cond, v) {
		return true
	}
	if e, ok := s["else"].(map[string]any); ok {
		return refusedBy(t, e, v)
	}
	return false
}

// matches is a JSON schema's verdict on a string for the keywords the refusals use.
func matches(t *testing.T, s map[string]any, v string) bool {
	t.Helper()
	for k, x := range s {
		switch k {
		case "pattern":
			if !regexp.MustCompile(x.(string)).MatchString(v) {
				return false
			}
		case "not":
			if matches(t, x.(map[string]any), v) {
				return false
			}
		case "anyOf":
			if !slices.ContainsFunc(x.([]any), func(a any) bool { return matches(t, a.(map[string]any), v) }) {
				return false
			}
		case "enum":
			if !slices.Contains(x.([]any), any(v)) {
				return false
			}
		case "type":
			if x != "string" {
				return false
			}
		default:
			t.Fatalf("matches: keyword %s is not evaluated here", k)
		}
	}
	return true
}

// A refusal says what is allowed: a value's pattern (or a not, oneOf, anyOf, allOf) sits in an
// "if" whose "then" is {const: what is allowed}, because helm prints a failed pattern as the
// regular expression and the others as "'not' failed". TestSchemaRefusalsSayWhatIsAllowed
// shows the messages with helm.
func TestSchemaRefusesOnlyWithMessages(t *testing.T) {
	var walk func(path string, o any, inIf bool)
	walk = func(path string, o any, inIf bool) {
		switch v := o.(type) {
		case map[string]any:
			for k, x := range v {
				switch k {
				case "pattern", "not", "oneOf", "anyOf", "allOf":
					if !inIf {
						t.Errorf("%s: %s outside an if/then refusal: helm would not say what is allowed", path, k)
					}
				case "then":
					if c, ok := x.(map[string]any)["const"].(string); ok && len(c) < 10 {
						t.Errorf("%s: then {const: %q} does not say what is allowed", path, c)
					}
				}
				walk(path+"/"+k, x, inIf || k == "if")
			}
		case []any:
			for i, x := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), x, inIf)
			}
		}
	}
	walk("", readSchema(t), false)
}
