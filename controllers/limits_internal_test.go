package controllers

import (
	"fmt"
	"os"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// A burst buffer of 40 nodes, each busy while its device and its link were probed, with a
// slow device here and there: more warnings than the status may hold. They become one per
// kind, and a status within the bound is left alone.
func TestBoundWarnings(t *testing.T) {
	var ws []v1alpha1.Warning
	for i := range 40 {
		node := fmt.Sprintf("n%02d", i)
		ws = append(ws,
			v1alpha1.Warning{Reason: v1alpha1.WarningNodeBusy, Component: "device", Node: node, Message: "node " + node + ": busy"},
			v1alpha1.Warning{Reason: v1alpha1.WarningNodeBusy, Component: "network", Node: node + "," + fmt.Sprintf("n%02d", (i+1)%40), Message: "link busy"})
	}
	ws = append(ws, v1alpha1.Warning{Reason: v1alpha1.WarningBelowDocumented, Component: "device-write", Node: "n07", Message: "slow"},
		v1alpha1.Warning{Reason: v1alpha1.WarningExceedsLimit, Operation: "write", Message: "above"})

	got := boundWarnings(ws)
	if len(got) != 4 {
		t.Fatalf("%d warnings, want one per kind (4): %+v", len(got), got)
	}
	dev := got[0]
	if dev.Reason != v1alpha1.WarningNodeBusy || dev.Component != "device" ||
		!strings.HasPrefix(dev.Message, "40 warnings of this kind on 40 node(s)") || !strings.HasSuffix(dev.Message, "the first: node n00: busy") {
		t.Errorf("device warnings: %+v", dev)
	}
	if nodes := strings.Split(got[1].Node, ","); len(nodes) != 17 || nodes[16] != "and 24 more" {
		t.Errorf("the links' nodes, 16 named: %q", got[1].Node)
	}
	if got[2] != ws[80] || got[3] != ws[81] {
		t.Errorf("a kind of one warning stays as it is: %+v", got[2:])
	}
	if few := ws[:maxWarnings]; len(boundWarnings(few)) != maxWarnings {
		t.Error("a status within the bound is left alone")
	}
}

// maxWarnings is the CRD's bound on status.warnings.
func TestMaxWarningsIsTheCRDs(t *testing.T) {
	b, err := os.ReadFile("../config/crd/bases/beeburst.io_burstbuffers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(b, &crd); err != nil {
		t.Fatal(err)
	}
	w := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"].Properties["warnings"]
	if w.MaxItems == nil || *w.MaxItems != maxWarnings {
		t.Fatalf("status.warnings maxItems %v, maxWarnings %d", w.MaxItems, maxWarnings)
	}
}
