// The BurstBuffer kind and its list. Its parts are split by concern: spec_types.go (what the
// user asks for), hardware_types.go (documented hardware), staging_types.go (copies in and out),
// status_types.go (what the operator observed), limits_types.go (the staged limits and
// warnings), target_types.go (sizing: spec.target, chunk size, comparison), conditions.go.

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BurstBuffer is a job's own parallel file system over its nodes' local drives, with the
// performance limits measured before the job writes a byte.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 40",message="metadata.name must be at most 40 characters: it prefixes the names of the pods and directories the operator creates"
// +kubebuilder:resource:shortName=bb,categories=beeburst
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Engine",type=string,JSONPath=`.spec.engine`
// +kubebuilder:printcolumn:name="Nodes",type=integer,JSONPath=`.status.nodeCount`
// +kubebuilder:printcolumn:name="Capacity",type=string,JSONPath=`.status.capacity`
// +kubebuilder:printcolumn:name="Limit-W",type=string,JSONPath=`.status.summary.writeLimit`,description="current write limit (stage 2 if measured, else stage 1)"
// +kubebuilder:printcolumn:name="Measured-W",type=string,JSONPath=`.status.summary.writeMeasured`,description="stage-3 best write bandwidth"
// +kubebuilder:printcolumn:name="Eff",type=string,JSONPath=`.status.summary.efficiency`,description="measured / limit"
// +kubebuilder:printcolumn:name="Bottleneck",type=string,JSONPath=`.status.summary.bottleneck`,priority=1
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.status.target.state`,priority=1,description="spec.target: Predicted, Met, NotMet, Unreachable or Unknown"
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type BurstBuffer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is what the user asks for.
	// +kubebuilder:default={}
	// +optional
	Spec BurstBufferSpec `json:"spec,omitzero"`
	// status is what the operator observed and measured. It is never absent: the API server
	// defaults it to observedGeneration 0, so that kstatus (kubectl wait, Argo CD, Flux)
	// reads a burst buffer the operator has not seen yet as in progress, not as Current.
	// +kubebuilder:default={observedGeneration: 0}
	// +optional
	Status BurstBufferStatus `json:"status,omitzero"`

	// undecodable and statusUndecodable are set by UnmarshalJSON when spec or status could not
	// be decoded.
	undecodable       string `json:"-"`
	statusUndecodable bool   `json:"-"`
}

// BurstBufferList is a list of BurstBuffers.
//
// +kubebuilder:object:root=true
type BurstBufferList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BurstBuffer `json:"items"`
}

func init() {
	SchemeBuilder.Register(&BurstBuffer{}, &BurstBufferList{})
}
