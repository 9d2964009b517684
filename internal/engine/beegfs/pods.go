package beegfs

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/beeburst/beeburst/internal/agentapi"
	"github.com/beeburst/beeburst/internal/nodetask"
)

// ModuleMissingPrefix and MachineUUIDMissingPrefix start the message of `agent check-module`
// when the module, or the machine UUID, is absent (cmd/agent/module.go; a test there keeps
// them equal).
const (
	ModuleMissingPrefix      = "kernel module missing:"
	MachineUUIDMissingPrefix = "machine uuid missing:"
)

// ModuleCheckPod checks that the beegfs client module is loaded on one node, and that the
// node has the machine UUID its metadata and storage servers register with (every node runs a
// storage server). It needs no privileges: /proc/modules, /sys/module and the DMI table in a
// container show the host's. It also reports the space free at spec.storage.path before
// the services write there (engine.Result.FreeBytes), through a read-only mount of it.
func (in Instance) ModuleCheckPod(index int, node string) *corev1.Pod {
	pod := nodetask.Pod(in.BB, nodetask.Spec{
		Component: nodetask.ComponentModuleCheck, Index: index, Node: node, Image: in.AgentImage,
		Args:            agentapi.CheckModule{Name: "beegfs", MachineUUID: true, FreePath: nodetask.HostMount}.Args(),
		DeadlineSeconds: 60, MountStorage: true,
	})
	pod.Spec.Containers[0].VolumeMounts[0].ReadOnly = true
	return pod
}

// CleanPod removes the burst buffer's directory (all targets) on one node.
func (in Instance) CleanPod(index int, node string) *corev1.Pod {
	return nodetask.Pod(in.BB, nodetask.Spec{
		Component: nodetask.ComponentClean, Index: index, Node: node, Image: in.AgentImage,
		Args:            agentapi.DirRemove{Path: nodetask.InHost(in.BB, nodetask.DataDir(in.BB))}.Args(),
		DeadlineSeconds: 600, MountStorage: true,
	})
}

// MgmtdPod runs the management service on the first node.
func (in Instance) MgmtdPod(node string) *corev1.Pod {
	p := in.Ports()
	pod := in.servicePod(nodetask.ComponentMgmtd, 0, node, in.Images.Mgmtd, in.MgmtdArgs(),
		[]corev1.EnvVar{{Name: "beegfs_setup_1", Value: in.MgmtdSetup()}},
		[]corev1.ContainerPort{
			{Name: "beemsg-tcp", ContainerPort: p.Mgmtd, HostPort: p.Mgmtd, Protocol: corev1.ProtocolTCP},
			{Name: "beemsg-udp", ContainerPort: p.Mgmtd, HostPort: p.Mgmtd, Protocol: corev1.ProtocolUDP},
			{Name: "grpc", ContainerPort: p.GRPC, HostPort: p.GRPC, Protocol: corev1.ProtocolTCP},
		}, p.GRPC)
	if name := LicenseCopyName(in.BB); name != "" {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{
			Name: "license",
			VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
				SecretName: name, DefaultMode: ptr.To(int32(0o400)),
				Items: []corev1.KeyToPath{{Key: KeyLicense, Path: KeyLicense}},
			}},
		})
		c := &pod.Spec.Containers[0]
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "license", MountPath: LicenseDir, ReadOnly: true})
	}
	return pod
}

// MetaPod runs a metadata service on the i-th node.
func (in Instance) MetaPod(i int, node string) *corev1.Pod {
	p := in.Ports()
	pod := in.servicePod(nodetask.ComponentMeta, i, node, in.Images.Meta, in.MetaArgs(node),
		[]corev1.EnvVar{{Name: "beegfs_setup_1", Value: in.MetaSetup(i)}},
		[]corev1.ContainerPort{
			{Name: "beemsg-tcp", ContainerPort: p.Meta, HostPort: p.Meta, Protocol: corev1.ProtocolTCP},
			{Name: "beemsg-udp", ContainerPort: p.Meta, HostPort: p.Meta, Protocol: corev1.ProtocolUDP},
		}, p.Meta)
	startWithMtab(pod)
	return pod
}

// StoragePod runs the storage service (all targets of the node) on the i-th node.
func (in Instance) StoragePod(i int, node string) *corev1.Pod {
	p := in.Ports()
	var env []corev1.EnvVar
	for t, s := range in.StorageSetups(i) {
		env = append(env, corev1.EnvVar{Name: fmt.Sprintf("beegfs_setup_%d", t+1), Value: s})
	}
	pod := in.servicePod(nodetask.ComponentStorage, i, node, in.Images.Storage, in.StorageArgs(node), env,
		[]corev1.ContainerPort{
			{Name: "beemsg-tcp", ContainerPort: p.Storage, HostPort: p.Storage, Protocol: corev1.ProtocolTCP},
			{Name: "beemsg-udp", ContainerPort: p.Storage, HostPort: p.Storage, Protocol: corev1.ProtocolUDP},
		}, p.Storage)
	startWithMtab(pod)
	return pod
}

// ImageEntrypoint is the official server images' ENTRYPOINT (ThinkParQ/beegfs-containers
// Dockerfile): start.sh, which runs init.py (the beegfs_setup_N commands) and then execs the
// daemon with the container's arguments. Images named in spec.beegfs.images must have it too.
const ImageEntrypoint = "/root/start.sh"

// mtab is the file beegfs-meta reads the mount table from.
const mtab = "/etc/mtab"

// mtabScript starts the image's entrypoint ($0) with the container's arguments ($@), after
// making path a link to /proc/self/mounts if it does not exist. A link it cannot make (a
// read-only root file system) is reported and the service starts anyway: only a metadata
// target on ext4 needs the file.
func mtabScript(path string) string {
	return fmt.Sprintf(`[ -e %[1]s ] || ln -sf /proc/self/mounts %[1]s || echo "beeburst: %[1]s is missing and cannot be created; beegfs-meta on an ext4 target stops with 'Could not open mtab' without it" >&2
exec "$0" "$@"
`, path)
}

// startWithMtab gives a C++ service an /etc/mtab. beegfs-meta with its target on ext4 reads
// it (setmntent("/etc/mtab"), ThinkParQ/beegfs meta/source/app/App.cpp: a file system mounted
// below the metadata directory limits the extended attributes per inode) and stops with
// "Could not open mtab" without it. Docker creates the file in every container; containerd does
// not, and Debian-slim images, the official images' base, do not ship it. A link to /proc/self/mounts, what
// distributions install, lists the daemon's own mount namespace, the view it compares the
// metadata directory's path with. No volume can provide it: a subPath may not be a link out
// of its volume, and a host path is not the container's mount table. The storage service (the
// same image base) starts the same way, so that both behave alike on any runtime. The
// arguments stay the container's args, as the image's init.py reads them.
func startWithMtab(pod *corev1.Pod) {
	c := &pod.Spec.Containers[0]
	c.Command = []string{"/bin/sh", "-c", mtabScript(mtab), ImageEntrypoint}
}

// servicePod is a BeeGFS daemon: host network (the kernel client opens its sockets in the
// host's network namespace, so services must be reachable on the nodes' addresses; declaring
// the shifted ports as host ports lets the kubelet refuse a clash instead of a daemon failing
// to bind), pinned with nodeName (its targets live on that node), restarted in place, the
// storage path as a hostPath. Root without privileges: writing below a root-owned host
// directory needs uid 0 and DAC_OVERRIDE, nothing else does.
func (in Instance) servicePod(component string, index int, node, image string, args []string, env []corev1.EnvVar, ports []corev1.ContainerPort, probePort int32) *corev1.Pod {
	pod := in.basePod(component, index, node)
	pod.Spec.RestartPolicy = corev1.RestartPolicyAlways
	pod.Spec.Volumes = append([]corev1.Volume{{
		Name: "storage",
		VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
			Path: in.BB.Spec.Storage.Path, Type: ptr.To(corev1.HostPathDirectory),
		}},
	}, {
		Name: "config",
		VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: ConfigMapName(in.BB)},
		}},
	}}, pod.Spec.Volumes...)
	c := &pod.Spec.Containers[0]
	c.Image = image
	// The image's entrypoint (start.sh) initialises targets from beegfs_setup_N, then starts
	// the daemon with these arguments (meta and storage: through startWithMtab).
	c.Args = args
	c.Env = env
	c.Ports = ports
	c.VolumeMounts = append([]corev1.VolumeMount{
		{Name: "storage", MountPath: nodetask.HostMount},
		{Name: "config", MountPath: ConfigDir, ReadOnly: true},
	}, c.VolumeMounts...)
	// The service's own check: it listens on its port. Registration and target state are
	// checked through mgmtd by the ready task. A node loaded by benchmarks answers late: a
	// connect may take seconds, and only 30 s without one makes the pod not Ready (the first
	// success makes it Ready at once). The operator does not read readiness once the file
	// system is up: a daemon is gone when its container is.
	c.ReadinessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(probePort)}},
		PeriodSeconds: 5, TimeoutSeconds: 5, FailureThreshold: 6,
	}
	c.SecurityContext = &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"DAC_OVERRIDE", "CHOWN", "FOWNER"}},
	}
	return pod
}

// ClientPod mounts the file system on one node. It is the one privileged pod of the engine:
// mount(2) of a kernel file system needs CAP_SYS_ADMIN in the host's mount namespace, and the
// mount must propagate back to the host (Bidirectional, which Kubernetes allows only in
// privileged containers) so that workload pods on the node see it through a hostPath.
func (in Instance) ClientPod(i int, node string) *corev1.Pod {
	p := in.Ports()
	pod := in.basePod(nodetask.ComponentClient, i, node)
	pod.Spec.RestartPolicy = corev1.RestartPolicyAlways
	// Time for the unmount on SIGTERM, before the kubelet kills the container.
	pod.Spec.TerminationGracePeriodSeconds = ptr.To(int64(60))
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{
		Name: "mounts",
		VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
			Path: MountRoot, Type: ptr.To(corev1.HostPathDirectoryOrCreate),
		}},
	})
	c := &pod.Spec.Containers[0]
	c.Image = in.Images.Client
	c.Command = []string{"/bin/sh", "-c", ClientScript}
	c.Env = []corev1.EnvVar{
		{Name: "CLIENT_CONF", Value: in.ClientConf(node)},
		{Name: "MOUNT_POINT", Value: MountPoint(in.BB)},
		{Name: "BB_UID", Value: string(in.BB.UID)},
	}
	// The client's UDP port, shifted: declared so that two instances can never share it.
	c.Ports = []corev1.ContainerPort{{Name: "client-udp", ContainerPort: p.Client, HostPort: p.Client, Protocol: corev1.ProtocolUDP}}
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{
		Name: "mounts", MountPath: MountRoot, MountPropagation: ptr.To(corev1.MountPropagationBidirectional),
	})
	// Ready once mounted. An exec probe is a process started through the container runtime,
	// which took longer than a second while benchmarks loaded the nodes: 10 s to answer, and
	// 30 s of failures before the pod is not Ready. A mount that goes away ends the container
	// itself (ClientScript), which is what the operator reads as a lost mount.
	c.ReadinessProbe = &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{
			"/bin/sh", "-c", fmt.Sprintf("grep -qs ' %s beegfs .*cfgFile=/tmp/beegfs-client-%s.conf' /proc/mounts", MountPoint(in.BB), in.BB.UID),
		}}},
		PeriodSeconds: 5, TimeoutSeconds: 10, FailureThreshold: 6,
	}
	c.SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
	return pod
}

// ReadyPod waits, from the management node, until mgmtd reports all targets online.
func (in Instance) ReadyPod() *corev1.Pod {
	return in.cliTask(nodetask.ComponentReady, in.ReadyScript(240), 300)
}

// StripePod sets the root directory's stripe pattern.
func (in Instance) StripePod() *corev1.Pod {
	return in.cliTask(nodetask.ComponentStripe, in.StripeScript(), 120)
}

// cliTask is a one-shot pod with the beegfs CLI, on the management node, in the host network
// (the CLI also talks BeeMsg to the metadata services at the addresses they registered, which
// are host addresses). A one-shot task (restart policy Never): the controller waits for it.
func (in Instance) cliTask(component, script string, deadline int64) *corev1.Pod {
	pod := in.basePod(component, 0, PlacementFor(in.BB, in.Nodes).Mgmtd)
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	pod.Spec.ActiveDeadlineSeconds = ptr.To(deadline)
	c := &pod.Spec.Containers[0]
	c.Image = in.Images.Client
	c.Command = []string{"/bin/sh", "-c", script}
	// The CLI runs only as root (beegfs-go isCommandAuthorized); it needs no capabilities.
	c.SecurityContext = &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
	return pod
}

// basePod is what every pod of the engine shares.
func (in Instance) basePod(component string, index int, node string) *corev1.Pod {
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      nodetask.Name(in.BB, component, index),
			Namespace: nodetask.Namespace(in.BB),
			Labels:    serviceLabels(in.BB, component),
		},
		Spec: corev1.PodSpec{
			NodeName:                     node,
			HostNetwork:                  true,
			DNSPolicy:                    corev1.DNSClusterFirstWithHostNet,
			AutomountServiceAccountToken: ptr.To(false),
			// A burst buffer's nodes are reserved for its job: run there whatever the taints.
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers: []corev1.Container{{
				Name:                     component,
				ImagePullPolicy:          corev1.PullIfNotPresent,
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
				Env:                      nil,
			}},
		},
	}
	if in.authOn() {
		pod.Spec.Volumes = []corev1.Volume{{
			Name: "auth",
			VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
				SecretName: SecretName(in.BB), DefaultMode: ptr.To(int32(0o400)),
			}},
		}}
		pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "auth", MountPath: AuthDir, ReadOnly: true}}
	}
	nodetask.Owned(in.BB, &pod.ObjectMeta)
	return pod
}
