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

// StartDir is the directory of the shared file system (below FileSystemMount, or the
// mount of the storage a comparison runs on) that holds the markers of runs that start
// together (StartTogether, StartTogetherIn) while they run, below the burst buffer's UID: a
// marker that a run killed hard left on a user's claim is not taken by a burst buffer
// created again under the name for its own peer's.
const StartDir = ".beeburst-start"

// StartTogether has pod's run start at once with the runs of names (all of its point's runs,
// its own among them) on the other nodes, when the point's nodes share one file system:
// its pod waits before it measures until the others' pods started (at most 30 s), through
// markers on that file system, so that the runs of a point move their bytes beside each
// other, not one after the other as their kubelets start them.
func StartTogether(bb *v1alpha1.BurstBuffer, pod *corev1.Pod, names []string) {
	StartTogetherIn(bb, pod, names, FileSystemMount)
}

// StartTogetherIn is StartTogether with the markers on the file system mounted at mount in
// the pod: a shared file system other than the burst buffer's (a comparison's claim).
func StartTogetherIn(bb *v1alpha1.BurstBuffer, pod *corev1.Pod, names []string, mount string) {
	var peers []string
	for _, n := range names {
		if n != pod.Name {
			peers = append(peers, n)
		}
	}
	if len(peers) == 0 {
		return
	}
	c := agentapi.Chain{Dir: path.Join(mount, StartDir, string(bb.UID), names[0]), Name: pod.Name, StartWith: peers, Shared: true}
	ctr := &pod.Spec.Containers[0]
	ctr.Args = append(ctr.Args, c.Args()...)
}
