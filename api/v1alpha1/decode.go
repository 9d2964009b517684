package v1alpha1

import (
	"encoding/json"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
)

// UnmarshalJSON decodes a BurstBuffer without ever failing on its spec or status.
//
// Why: the manager's informer lists all BurstBuffers in one response and decodes it as one
// BurstBufferList. With the default decoding, one object whose spec Go cannot decode - a
// string where this version has a number, written through an older CRD, restored from a
// backup, or put into etcd by anything but this API server - fails every list, the cache never
// syncs, and no burst buffer in the cluster is reconciled until that object is gone. The API
// server's schema is not the only writer, so the operator must not depend on it.
//
// How: metadata must decode (the API server guarantees its shape, and without a name nothing
// can be reported); spec and status are decoded separately, and a part that fails is left
// empty and its error kept (Undecodable). The reconcilers check Undecodable before anything
// else and touch nothing but a condition and an event on such an object, so an empty spec is
// never mistaken for a request. It is decoded with the same case-sensitive decoder the
// client uses (sigs.k8s.io/json), so that an object which decodes normally decodes exactly as
// it would without this method.
//
// The same decoding applies to list items and watch events (both decode BurstBuffers). A
// client that negotiates CBOR instead of JSON (client-go's ClientsAllowCBOR, off by default)
// would bypass this method. A reader that wants strict decoding - a user's manifest, where an
// unknown field or a bad value must be an error - decodes into a copy of the type without
// methods (type strict BurstBuffer), as kubectl-beeburst does.
func (b *BurstBuffer) UnmarshalJSON(data []byte) error {
	var parts struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        metav1.ObjectMeta `json:"metadata"`
		Spec            json.RawMessage   `json:"spec"`
		Status          json.RawMessage   `json:"status"`
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(data, &parts); err != nil {
		return err
	}
	*b = BurstBuffer{TypeMeta: parts.TypeMeta, ObjectMeta: parts.Metadata}
	var problems []string
	if present(parts.Spec) {
		if err := kjson.UnmarshalCaseSensitivePreserveInts(parts.Spec, &b.Spec); err != nil {
			b.Spec = BurstBufferSpec{}
			problems = append(problems, "spec: "+err.Error())
		}
	}
	if present(parts.Status) {
		if err := kjson.UnmarshalCaseSensitivePreserveInts(parts.Status, &b.Status); err != nil {
			b.Status = BurstBufferStatus{}
			b.statusUndecodable = true
			problems = append(problems, "status: "+err.Error())
		}
	}
	b.undecodable = strings.Join(problems, "; ")
	return nil
}

func present(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// Undecodable says why this BurstBuffer's spec or status could not be decoded (and were left
// empty), or "" when both decoded. See UnmarshalJSON.
func (b *BurstBuffer) Undecodable() string { return b.undecodable }

// StatusUndecodable says whether the status is among what could not be decoded: it is empty
// in memory, and writing it from there would replace what the API server holds.
func (b *BurstBuffer) StatusUndecodable() bool { return b.statusUndecodable }
