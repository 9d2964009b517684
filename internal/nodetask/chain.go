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

// InChain puts a measuring pod into its node's chain of runs (agentapi.Chain): it runs after
// the runs named in after ended, and, given startWith, once their pods started. Its marker is
// its own name; the markers live in a directory of this burst buffer (its UID: a burst buffer
// created again under the same name starts a chain of its own) below ChainDir, through the
// storage path's mount, which the pod gets if it had none.
func InChain(bb *v1alpha1.BurstBuffer, pod *corev1.Pod, after, startWith []string) {
	c := agentapi.Chain{Dir: path.Join(InHost(bb, ChainDir(bb)), string(bb.UID)), Name: pod.Name, After: after, StartWith: startWith}
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
