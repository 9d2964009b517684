package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/beeburst/beeburst/internal/limits"
)

// outputFlags is -o, as kubectl has it: the report as a table (the default; "table" names
// it too), "wide" (the table and the sweep's grid), or the report's JSON document through
// cli-runtime's printers: json, yaml, jsonpath=..., go-template=... (with --template and
// --allow-missing-template-keys).
type outputFlags struct {
	format   string
	jsonYAML *genericclioptions.JSONYamlPrintFlags
	template *genericclioptions.KubeTemplatePrintFlags
}

func newOutputFlags() *outputFlags {
	return &outputFlags{jsonYAML: genericclioptions.NewJSONYamlPrintFlags(), template: genericclioptions.NewKubeTemplatePrintFlags()}
}

func (o *outputFlags) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&o.format, "output", "o", "", "output format: one of ("+strings.Join(o.allowed(), ", ")+"); the default is the table")
	o.template.AddFlags(cmd)
}

func (o *outputFlags) allowed() []string {
	out := []string{"table", "wide"}
	out = append(out, o.jsonYAML.AllowedFormats()...)
	return append(out, o.template.AllowedFormats()...)
}

// table is true for the human forms: the table, or wide.
func (o *outputFlags) table() bool {
	return o.format == "" || o.format == "table" || o.format == "wide"
}

func (o *outputFlags) wide() bool { return o.format == "wide" }

// validate checks -o before anything is read or fetched.
func (o *outputFlags) validate() error {
	if o.table() {
		return nil
	}
	_, err := o.printer()
	return err
}

func (o *outputFlags) printer() (printers.ResourcePrinter, error) {
	p, err := o.jsonYAML.ToPrinter(o.format)
	if genericclioptions.IsNoCompatiblePrinterError(err) {
		p, err = o.template.ToPrinter(o.format)
	}
	if genericclioptions.IsNoCompatiblePrinterError(err) {
		return nil, fmt.Errorf("--output must be one of %s, not %q", strings.Join(o.allowed(), ", "), o.format)
	}
	if err != nil {
		return nil, fmt.Errorf("--output %s: %w", o.format, err)
	}
	return p, nil
}

// printDocument prints a JSON document (limits.Document: the -o json contract of both
// commands; estimate --target's sizing document) with the printer -o names. The document is
// not a Kubernetes object, so it goes to the JSON and YAML printers as raw JSON
// (runtime.Unknown) and to the template printers as unstructured content.
func (o *outputFlags) printDocument(w io.Writer, doc any) error {
	p, err := o.printer()
	if err != nil {
		return err
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return runtimeError{fmt.Errorf("encoding the report: %w", err)}
	}
	var obj runtime.Object = &runtime.Unknown{Raw: raw, ContentType: runtime.ContentTypeJSON}
	if !slices.Contains(o.jsonYAML.AllowedFormats(), o.format) {
		// jsonpath and go-template read unstructured content as it is, and apimachinery's
		// JSON reader keeps whole numbers int64: 60606060606, not 6.0606060606e+10.
		var content map[string]any
		if err := utiljson.Unmarshal(raw, &content); err != nil {
			return runtimeError{fmt.Errorf("encoding the report: %w", err)}
		}
		obj = &unstructured.Unstructured{Object: content}
	}
	if err := p.PrintObj(obj, w); err != nil {
		return runtimeError{fmt.Errorf("writing the output: %w", err)}
	}
	return nil
}

// printTable prints the report for people; wide adds the sweep's grid when there are points.
func (o *outputFlags) printTable(w io.Writer, r limits.Report, points []limits.Point) error {
	if o.wide() {
		r.SweepPoints = points
	}
	if err := limits.WriteTable(w, r); err != nil {
		return runtimeError{fmt.Errorf("writing the output: %w", err)}
	}
	return nil
}
