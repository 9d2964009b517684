package v1alpha1

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	kjson "sigs.k8s.io/json"
)

const goodBB = `{"apiVersion":"beeburst.io/v1alpha1","kind":"BurstBuffer","metadata":{"name":"a","namespace":"ns","finalizers":["beeburst.io/teardown"]},
"spec":{"engine":"local","nodes":{"count":2},"storage":{"path":"/mnt/nvme","capacityPerNode":"10Gi"},"validation":{"timeBudget":"10m"}},
"status":{"phase":"Ready","nodes":[{"name":"n1"}]}}`

func TestDecodesAsWithoutTheMethod(t *testing.T) {
	var got BurstBuffer
	if err := json.Unmarshal([]byte(goodBB), &got); err != nil {
		t.Fatal(err)
	}
	// The plain decoding of the same data, without UnmarshalJSON.
	type plain BurstBuffer
	var want plain
	if err := kjson.UnmarshalCaseSensitivePreserveInts([]byte(goodBB), &want); err != nil {
		t.Fatal(err)
	}
	if got.Undecodable() != "" || !reflect.DeepEqual(got, BurstBuffer(want)) {
		t.Fatalf("decoded differently:\n got %+v\nwant %+v", got, want)
	}
	if got.Spec.Storage.CapacityPerNode.String() != "10Gi" || got.Status.Nodes[0].Name != "n1" || got.Spec.Validation.TimeBudget != "10m" {
		t.Fatalf("%+v", got)
	}
}

func TestOneUndecodableItemDoesNotFailTheList(t *testing.T) {
	bad := strings.Replace(goodBB, `"count":2`, `"count":"two"`, 1)
	bad = strings.Replace(bad, `"name":"a"`, `"name":"b"`, 1)
	badStatus := strings.Replace(goodBB, `"nodes":[{"name":"n1"}]`, `"nodes":"n1"`, 1)
	badStatus = strings.Replace(badStatus, `"name":"a"`, `"name":"c"`, 1)
	var list BurstBufferList
	if err := kjson.UnmarshalCaseSensitivePreserveInts([]byte(`{"items":[`+goodBB+`,`+bad+`,`+badStatus+`]}`), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 3 {
		t.Fatalf("%d items", len(list.Items))
	}
	a, b, c := list.Items[0], list.Items[1], list.Items[2]
	if a.Undecodable() != "" || a.Spec.Nodes.Count != 2 {
		t.Errorf("the good one: %q %+v", a.Undecodable(), a.Spec)
	}
	// Metadata survives, the spec is empty, the problem names the field.
	if b.Name != "b" || b.Namespace != "ns" || len(b.Finalizers) != 1 || !reflect.DeepEqual(b.Spec, BurstBufferSpec{}) ||
		!strings.Contains(b.Undecodable(), "spec: ") || !strings.Contains(b.Undecodable(), "nodes.count") || b.StatusUndecodable() {
		t.Errorf("the undecodable spec: %q %+v", b.Undecodable(), b)
	}
	if b.Status.Phase != PhaseReady {
		t.Errorf("its status decoded: %+v", b.Status)
	}
	if c.Spec.Nodes.Count != 2 || !c.StatusUndecodable() || !strings.Contains(c.Undecodable(), "status: ") || c.Status.Phase != "" {
		t.Errorf("the undecodable status: %q %+v", c.Undecodable(), c)
	}
	if c.DeepCopy().Undecodable() != c.Undecodable() {
		t.Error("DeepCopy loses the decoding problem")
	}
}
