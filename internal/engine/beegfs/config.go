package beegfs

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/nodetask"
)

// ConfigMapName is the ConfigMap of bb's BeeGFS instance.
func ConfigMapName(bb *v1alpha1.BurstBuffer) string { return nodetask.TaskName(bb, bb.Name+"-beegfs") }

// ConfigMap holds the files the services read at start that cannot be arguments: mgmtd's
// configuration (MgmtdConfig) and each node's interface filters (InterfacesFile), mounted at
// ConfigDir in every service pod. It is written once, before the first service starts, and
// never changed (the services read it only at start, so a change would not take effect).
func (in Instance) ConfigMap() *corev1.ConfigMap {
	data := map[string]string{MgmtdConfigKey: in.MgmtdConfig()}
	for _, n := range in.Nodes {
		if f := in.InterfacesFile(n); f != "" {
			data[InterfacesKey(n)] = f
		}
	}
	cm := &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name: ConfigMapName(in.BB), Namespace: nodetask.Namespace(in.BB),
			Labels: serviceLabels(in.BB, nodetask.ComponentConfig),
		},
		Immutable: ptr.To(true),
		Data:      data,
	}
	nodetask.Owned(in.BB, &cm.ObjectMeta)
	return cm
}
