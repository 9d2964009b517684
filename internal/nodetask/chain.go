package nodetask

import (
	"path"

	corev1 "k8s.io/api/core/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/agentapi"
)

// ChainDir is the node directory of bb's chain markers (agentapi.ChainDirOf), removed with
// the burst buffer's directory.
func ChainDir(bb *v1alpha1.BurstBuffer) string {
	return agentapi.ChainDirOf(DataDir(bb))
}

// InChain puts a measuring pod into its node's chain of runs: c's After, StartWith and
// HoldFor (agentapi.Chain); its marker is its own name. The markers live in a directory of
// this burst buffer (its UID: a burst buffer created again under the same name starts a chain
// of its own) below ChainDir, through the storage path's mount, which the pod gets if it had
// none.
func InChain(bb *v1alpha1.BurstBuffer, pod *corev1.Pod, c agentapi.Chain) {
	c.Dir, c.Name = path.Join(InHost(bb, ChainDir(bb)), string(bb.UID)), pod.Name
	ctr := &pod.Spec.Containers[0]
	ctr.Args = append(ctr.Args, c.Args()...)
	for _, v := range pod.Spec.Volumes {
		if v.Name == storageVolume {
			return
		}
	}
	pod.Spec.Volumes = append(pod.Spec.Volumes, storageVolumeOf(bb))
	ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: storageVolume, MountPath: HostMount})
}
