package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	quantityType    = reflect.TypeFor[resource.Quantity]()
)

// fieldError finds the field of a YAML document that a strict decode into a value of type t
// refused, and says so with its path from the manifest's root (prefix names where the document
// sits, e.g. "spec.hardware" for a bare hardware block): `spec.hardware.clients.link.
// rateBitsPerSecond: "fast" is not a quantity (e.g. 100G, 512Ki)` where encoding/json says only
// "quantities must match the regular expression ...". It walks the document beside the Go type
// (json tags, inline structs), decodes each leaf on its own, and reports the first refusal in
// key order. nil when it finds none (the caller keeps the decoder's own error).
func fieldError(doc []byte, t reflect.Type, prefix string) error {
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil
	}
	return walkField(prefix, v, t)
}

func walkField(path string, v any, t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v == nil {
		return nil // null: the zero value, as encoding/json takes it
	}
	if isLeaf(t) {
		return checkLeaf(path, v, t)
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: %s is not an object with the fields %s", orRoot(path), describe(v), strings.Join(fieldNames(t), ", "))
		}
		fields := jsonFields(t)
		for _, k := range sortedKeys(m) {
			ft, ok := fields[k]
			if !ok {
				return fmt.Errorf("%s: unknown field; %s has %s", join(path, k), orRoot(path), strings.Join(fieldNames(t), ", "))
			}
			if err := walkField(join(path, k), m[k], ft); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		s, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: %s is not a list", orRoot(path), describe(v))
		}
		for i, e := range s {
			if err := walkField(fmt.Sprintf("%s[%d]", path, i), e, t.Elem()); err != nil {
				return err
			}
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: %s is not a mapping", orRoot(path), describe(v))
		}
		for _, k := range sortedKeys(m) {
			if err := walkField(join(path, k), m[k], t.Elem()); err != nil {
				return err
			}
		}
	}
	return nil
}

// isLeaf: a type decoded as one value - a scalar, []byte, or a type with its own UnmarshalJSON
// (resource.Quantity, metav1.Time, ...).
func isLeaf(t reflect.Type) bool {
	if t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		return true
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map, reflect.Array:
		return false
	case reflect.Slice:
		return t.Elem().Kind() == reflect.Uint8
	}
	return true
}

func checkLeaf(path string, v any, t reflect.Type) error {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	uerr := json.Unmarshal(b, reflect.New(t).Interface())
	if uerr == nil {
		return nil
	}
	what := ""
	switch {
	case t == quantityType:
		what = "a quantity (e.g. 100G, 512Ki, 1.5Gi)"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		what = "an integer"
		if _, isNumber := v.(json.Number); isNumber {
			what = fmt.Sprintf("an integer of %d bits", t.Bits())
		}
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		what = "a number"
	case t.Kind() == reflect.Bool:
		what = "true or false"
	case t.Kind() == reflect.String:
		what = "a string"
	default:
		return fmt.Errorf("%s: %s: %v", orRoot(path), describe(v), uerr)
	}
	return fmt.Errorf("%s: %s is not %s", orRoot(path), describe(v), what)
}

// jsonFields are a struct's JSON field names and types, with inline (embedded) structs'
// fields in place, as encoding/json sees them.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					out[k] = v
				}
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func fieldNames(t reflect.Type) []string {
	var names []string
	for k := range jsonFields(t) {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func orRoot(path string) string {
	if path == "" {
		return "the document"
	}
	return path
}

// describe shows a value as the user wrote it: strings quoted, numbers and booleans as they
// are, objects and lists by their kind.
func describe(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("%q", x)
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	default:
		return fmt.Sprint(x)
	}
}
