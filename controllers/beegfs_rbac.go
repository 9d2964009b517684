package controllers

// RBAC of the beegfs engine (internal/beegfs): the connection-authentication and TLS Secret
// it creates for each burst buffer (owned by it, so garbage collection removes it). Pods,
// nodes and burstbuffers are covered by the reconciler's own markers.
//
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;delete
