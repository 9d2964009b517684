package controllers

// RBAC of the Secrets: the beegfs engine's connection-authentication and TLS Secret and its
// copy of a licence live in the operator's namespace with the burst buffer's other host-level
// children (nodetask.Namespace), so only there may the operator list, create and delete
// Secrets. Elsewhere it reads the Secrets a spec names (a licence, an object store's
// credentials), one at a time, past the cache.
//
// +kubebuilder:rbac:groups="",namespace=beeburst-system,resources=secrets,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get
// +kubebuilder:rbac:groups="",namespace=beeburst-system,resources=configmaps,verbs=delete
