// Stage-in and stage-out: the copies between the burst buffer and durable storage, asked for in
// the spec and reported in the status.

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StageSpec is one copy between the burst buffer and durable storage: a PersistentVolumeClaim
// in the BurstBuffer's namespace or an object store (S3 API). A claim should be mountable on
// every node of the burst buffer (ReadWriteMany, or ReadOnlyMany for stage-in): the copy runs
// on all of them at once. A ReadWriteOnce claim works too, one node at a time. An object store
// is always copied by all nodes at once.
// +kubebuilder:validation:XValidation:rule="has(self.persistentVolumeClaim) != has(self.s3)",message="exactly one of persistentVolumeClaim and s3 is required"
type StageSpec struct {
	// path is the directory inside the burst buffer, relative to its root.
	// +kubebuilder:default="."
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('/') && !self.contains('..')",message="path must be relative to the burst buffer's root and must not contain '..'"
	// +kubebuilder:validation:XValidation:rule="!self.matches('[[:cntrl:]]')",message="path must not contain control characters"
	// +optional
	Path string `json:"path,omitempty"`

	// persistentVolumeClaim is the durable side of the copy (or s3).
	// +optional
	PersistentVolumeClaim PVCSource `json:"persistentVolumeClaim,omitzero"`

	// s3 is the durable side of the copy as an object store (or persistentVolumeClaim).
	// +optional
	S3 *S3Source `json:"s3,omitempty"`
}

// S3Source names a prefix in an S3 bucket (AWS S3, or any server of the S3 API such as MinIO
// or Ceph RGW). Stage-in copies every object below the prefix; stage-out uploads each file
// under the prefix and its path, never overwriting an object (see docs/workloads.md).
type S3Source struct {
	// url is s3://bucket or s3://bucket/prefix.
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/([^/?#]+/)*[^/?#]*)?$`
	// +kubebuilder:validation:XValidation:rule="!self.split('/').exists(p, p == '..')",message="s3.url must not contain '..'"
	// +kubebuilder:validation:XValidation:rule="!self.matches('[[:cntrl:]]')",message="s3.url must not contain control characters"
	URL string `json:"url"`

	// endpoint is the server's URL (http or https), for object stores other than AWS S3;
	// empty: AWS S3.
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^https?://[^/?#]+/?$`
	// +kubebuilder:validation:XValidation:rule="!self.matches('[@[:space:][:cntrl:]]')",message="s3.endpoint must be http(s)://host[:port] without user information ('@'), whitespace or control characters; credentials belong in credentialsSecret"
	// +optional
	Endpoint string `json:"endpoint,omitempty"`

	// region of the bucket; empty: asked from the server.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9][A-Za-z0-9_.-]*$')",message="s3.region must be letters, digits and - _ . such as eu-central-1"
	// +optional
	Region string `json:"region,omitempty"`

	// credentialsSecret names a Secret in the BurstBuffer's namespace with the keys
	// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and optionally AWS_SESSION_TOKEN. Without it
	// the copy pods use the environment's default credentials (e.g. IRSA or an instance role).
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="s3.credentialsSecret must be a Secret name: lower-case letters, digits, '-' and '.'"
	// +optional
	CredentialsSecret string `json:"credentialsSecret,omitempty"`
}

// PVCSource names a directory on a PersistentVolumeClaim.
type PVCSource struct {
	// claimName is the claim's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="persistentVolumeClaim.claimName must be a claim name: lower-case letters, digits, '-' and '.'"
	ClaimName string `json:"claimName"`

	// path is a directory on the claim, relative to its root.
	// +kubebuilder:default="."
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('/') && !self.contains('..')",message="persistentVolumeClaim.path must be relative and must not contain '..'"
	// +kubebuilder:validation:XValidation:rule="!self.matches('[[:cntrl:]]')",message="persistentVolumeClaim.path must not contain control characters"
	// +optional
	Path string `json:"path,omitempty"`
}

// StagePhase is where a stage-in or stage-out copy is.
// +kubebuilder:validation:Enum=Pending;Running;Succeeded;Failed
type StagePhase string

// Stage phases.
const (
	StagePending   StagePhase = "Pending"
	StageRunning   StagePhase = "Running"
	StageSucceeded StagePhase = "Succeeded"
	StageFailed    StagePhase = "Failed"
)

// StageStatus is the progress of a stage-in or stage-out copy, over all nodes.
type StageStatus struct {
	// phase of the whole copy.
	// +optional
	Phase StagePhase `json:"phase,omitempty"`
	// files copied so far.
	// +optional
	Files int64 `json:"files,omitempty"`
	// bytes copied so far.
	// +optional
	Bytes int64 `json:"bytes,omitempty"`
	// bytesPerSecond is the copy rate: bytes over the time since the copy started (until it
	// completed).
	// +optional
	BytesPerSecond int64 `json:"bytesPerSecond,omitempty"`
	// skippedFiles were already at the destination with the same content (an earlier,
	// interrupted copy, or the same file from several nodes).
	// +optional
	SkippedFiles int64 `json:"skippedFiles,omitempty"`
	// startTime is when the first copy started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// completionTime is when the copy finished.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// nodes is the copy per node.
	// +listType=map
	// +listMapKey=name
	// +optional
	Nodes []StageNodeStatus `json:"nodes,omitempty"`
	// message describes the copy: what runs, or what failed and what to do.
	// +optional
	Message string `json:"message,omitempty"`
}

// StageNodeStatus is the copy on one node.
type StageNodeStatus struct {
	// name of the node.
	Name string `json:"name"`
	// pod that copies on this node.
	// +optional
	Pod string `json:"pod,omitempty"`
	// phase of the node's copy.
	// +optional
	Phase StagePhase `json:"phase,omitempty"`
	// files copied by this node.
	// +optional
	Files int64 `json:"files,omitempty"`
	// bytes copied by this node.
	// +optional
	Bytes int64 `json:"bytes,omitempty"`
	// message: why the copy waits or failed.
	// +optional
	Message string `json:"message,omitempty"`
}
