package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/apibridge"
)

// input is what an estimate file holds.
type input struct {
	// name is metadata.name of a manifest, empty for a bare hardware block.
	name string
	// manifest is true for a BurstBuffer manifest, false for a bare hardware block.
	manifest   bool
	hw         *v1alpha1.HardwareSpec
	defaults   apibridge.Defaults
	validation *v1alpha1.ValidationSpec
	// spec is the manifest's whole spec (nil for a bare hardware block): estimate --target
	// reads its target, layout and node count.
	spec *v1alpha1.BurstBufferSpec
}

// decodeInput reads a BurstBuffer manifest, or a file holding only its spec.hardware block
// (with or without the "hardware:" key), and tells which it was. Decoding is strict: an
// unknown field is an error, not a silently ignored typo.
//
// Documents are split by apimachinery's YAML reader (as kubectl splits them); each is then
// decoded strictly by sigs.k8s.io/yaml (apimachinery's YAMLOrJSONDecoder would drop unknown
// fields without a word).
func decodeInput(data []byte) (input, error) {
	var docs [][]byte
	var tops []map[string]any
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return input{}, fmt.Errorf("cannot split the file into YAML documents: %w", err)
		}
		var top map[string]any
		if err := yaml.Unmarshal(doc, &top); err != nil {
			return input{}, fmt.Errorf("the file must hold a BurstBuffer manifest or its spec.hardware block as a YAML mapping: %w", err)
		}
		if top == nil { // empty or comments only
			continue
		}
		docs, tops = append(docs, doc), append(tops, top)
	}
	switch len(docs) {
	case 0:
		return input{}, errors.New("the file is empty: give a BurstBuffer manifest or its spec.hardware block")
	case 1:
	default:
		var keep []int
		for i, top := range tops {
			if top["kind"] == "BurstBuffer" {
				keep = append(keep, i)
			}
		}
		if len(keep) != 1 {
			return input{}, fmt.Errorf("the file holds %d YAML documents and %d BurstBuffers; give one BurstBuffer", len(docs), len(keep))
		}
		docs, tops = docs[keep[0]:keep[0]+1], tops[keep[0]:keep[0]+1]
	}
	doc, top := docs[0], tops[0]

	_, hasKind := top["kind"]
	_, hasAPIVersion := top["apiVersion"]
	_, hasSpec := top["spec"]
	_, hasMetadata := top["metadata"]
	if hasKind || hasAPIVersion || hasSpec || hasMetadata {
		if hasKind && top["kind"] != "BurstBuffer" {
			return input{}, fmt.Errorf("kind is %v: give a BurstBuffer manifest or its spec.hardware block", top["kind"])
		}
		if want := v1alpha1.GroupVersion.String(); hasAPIVersion && top["apiVersion"] != want {
			return input{}, fmt.Errorf("apiVersion is %v: this plugin reads %s", top["apiVersion"], want)
		}
		// Decoded through a copy of the type without its methods: BurstBuffer's own
		// UnmarshalJSON never fails (the operator's informer must survive any stored object),
		// while a user's manifest is read strictly - an unknown field or a bad value is an error.
		type strictBurstBuffer v1alpha1.BurstBuffer
		var strict strictBurstBuffer
		if err := yaml.UnmarshalStrict(doc, &strict); err != nil {
			if ferr := fieldError(doc, reflect.TypeFor[strictBurstBuffer](), ""); ferr != nil {
				return input{}, ferr
			}
			return input{}, fmt.Errorf("BurstBuffer manifest: %w", err)
		}
		bb := v1alpha1.BurstBuffer(strict)
		return input{name: bb.Name, manifest: true, hw: bb.Spec.Hardware, defaults: apibridge.DefaultsFor(&bb),
			validation: &bb.Spec.Validation, spec: &bb.Spec}, nil
	}

	in := input{defaults: apibridge.Defaults{Engine: v1alpha1.EngineBeeGFS}}
	if _, ok := top["hardware"]; ok && len(top) == 1 {
		var wrapped struct {
			Hardware *v1alpha1.HardwareSpec `json:"hardware"`
		}
		if err := yaml.UnmarshalStrict(doc, &wrapped); err != nil {
			if ferr := fieldError(doc, reflect.TypeOf(wrapped), "spec"); ferr != nil {
				return input{}, fmt.Errorf("hardware block: %w", ferr)
			}
			return input{}, fmt.Errorf("hardware block: %w", err)
		}
		in.hw = wrapped.Hardware
	} else {
		var hw v1alpha1.HardwareSpec
		if err := yaml.UnmarshalStrict(doc, &hw); err != nil {
			if ferr := fieldError(doc, reflect.TypeOf(hw), "spec.hardware"); ferr != nil {
				err = ferr
			}
			return input{}, fmt.Errorf("hardware block (a file without apiVersion/kind is read as spec.hardware): %w", err)
		}
		in.hw = &hw
	}
	if in.hw == nil || bytes.Equal(bytes.TrimSpace(doc), []byte("hardware:")) {
		return input{}, errors.New("the hardware block is empty")
	}
	return in, nil
}
