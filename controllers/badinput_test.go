package controllers_test

import (
	"context"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// The bad-input suite: invalid and hostile specs, each with the outcome it must
// have - refused by the API server with the field named, or, where only the operator can tell,
// a named False condition within the suite's timeout and before any pod exists.

// outcome is what must happen to one bad spec.
type outcome struct {
	// field is the path the API server's refusal names ("" for an operator outcome).
	field string
	// text is in the refusal, or in the condition's message.
	text string
	// condition and reason of an operator outcome.
	condition, reason string
	// phase the burst buffer shows with it.
	phase v1alpha1.Phase
	// play plays the kubelet until the outcome can happen (the device probe for capacity).
	play func(ctx context.Context, ns, name string)
}

func refusedAt(field, text string) outcome { return outcome{field: field, text: text} }

// failsBeforePods: the operator refuses it before choosing nodes or creating any pod.
func failsBeforePods(reason, text string) outcome {
	return outcome{condition: v1alpha1.ConditionProvisioned, reason: reason, text: text, phase: v1alpha1.PhaseFailed}
}

// badSpecBase is what every bad spec starts from: a local burst buffer on the spec's own node,
// stage 1 only, so that an operator outcome comes quickly. Each entry's YAML is merged over it.
func badSpecBase(ns string) map[string]any {
	return map[string]any{
		"engine":     "local",
		"nodes":      map[string]any{"count": int64(1), "selector": map[string]any{"matchLabels": map[string]any{"pool": ns}}},
		"validation": map[string]any{"profile": "none"},
	}
}

// merge lays over onto base, recursively for maps.
func merge(base, over map[string]any) map[string]any {
	for k, v := range over {
		if vm, ok := v.(map[string]any); ok {
			if bm, ok := base[k].(map[string]any); ok {
				base[k] = merge(bm, vm)
				continue
			}
		}
		base[k] = v
	}
	return base
}

const allowedRootsFlag = "--allowed-storage-roots=/mnt,/scratch,/local,/nvme,/var/lib/beeburst"

var _ = Describe("Bad input", func() {
	var (
		ctx context.Context
		ns  string
	)
	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
		makeNode(ctx, ns+"-a", map[string]string{"pool": ns})
	})

	DescribeTable("is refused at the earliest point, with the field named",
		func(specYAML string, want outcome) {
			over := map[string]any{}
			Expect(yaml.Unmarshal([]byte(specYAML), &over)).To(Succeed())
			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "beeburst.io/v1alpha1", "kind": "BurstBuffer",
				"metadata": map[string]any{"name": "bad", "namespace": ns},
				"spec":     merge(badSpecBase(ns), over),
			}}
			err := k8s.Create(ctx, obj)

			if want.condition == "" {
				Expect(err).To(HaveOccurred(), "the API server accepted it")
				Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
				Expect(err.Error()).To(And(ContainSubstring(want.field), ContainSubstring(want.text)))
				GinkgoWriter.Println("refused:", err.Error())
				return
			}

			Expect(err).NotTo(HaveOccurred())
			bb := &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad"}}
			if want.play != nil {
				want.play(ctx, ns, "bad")
			}
			Eventually(condition(ctx, bb, want.condition), timeout).Should(haveStatus(metav1.ConditionFalse, want.reason))
			c := condition(ctx, bb, want.condition)()
			Expect(c.Message).To(ContainSubstring(want.text))
			GinkgoWriter.Println("condition:", c.Type, c.Reason, c.Message)
			Eventually(phase(ctx, bb), timeout).Should(Equal(want.phase))
			ready := condition(ctx, bb, v1alpha1.ConditionReady)()
			Expect(ready.Status).To(Equal(metav1.ConditionFalse))
			Expect(ready.Reason).To(Equal(want.reason), "Ready carries the reason")
			if want.condition == v1alpha1.ConditionProvisioned {
				Expect(podsOf(ctx, ns, "bad")).To(BeEmpty(), "refused before any pod")
				Expect(get(ctx, bb).Status.Nodes).To(BeEmpty(), "refused before nodes are chosen")
				Eventually(warningEvents(ctx, ns, "bad", want.reason), timeout).ShouldNot(BeEmpty())
			}
			// It goes away cleanly: nothing was created for it, or its directory is removed.
			if want.play != nil {
				Expect(k8s.Delete(ctx, bb)).To(Succeed())
				finishPod(ctx, ns, "bad-clean-0", corev1.PodSucceeded, "")
			}
			deleteAndWait(ctx, bb)
		},

		// Durations: Go's notation, within bounds.
		Entry("a time budget of 'forever'", `validation: {timeBudget: forever}`, refusedAt("spec.validation.timeBudget", "validation.timeBudget must be a duration from 1s to 24h")),
		Entry("a negative time budget", `validation: {timeBudget: -5m}`, refusedAt("spec.validation.timeBudget", "from 1s to 24h")),
		Entry("a zero time budget", `validation: {timeBudget: 0s}`, refusedAt("spec.validation.timeBudget", "from 1s to 24h")),
		Entry("a time budget over a day", `validation: {timeBudget: 48h}`, refusedAt("spec.validation.timeBudget", "from 1s to 24h")),
		Entry("a time budget in words", `validation: {timeBudget: 10 minutes}`, refusedAt("spec.validation.timeBudget", "such as 90s, 10m or 1h30m")),
		Entry("a time budget in days, which Go does not know", `validation: {timeBudget: 1d}`, refusedAt("spec.validation.timeBudget", "such as 90s, 10m or 1h30m")),
		Entry("reuse results for 'yesterday'", `validation: {reuseComponentResultsFor: yesterday}`, refusedAt("spec.validation.reuseComponentResultsFor", "must be a duration from 0s to 168h")),
		Entry("a negative reuse age", `validation: {reuseComponentResultsFor: -1h}`, refusedAt("spec.validation.reuseComponentResultsFor", "from 0s to 168h")),
		Entry("a reuse age over a week", `validation: {reuseComponentResultsFor: 169h}`, refusedAt("spec.validation.reuseComponentResultsFor", "from 0s to 168h")),
		Entry("a ttl of -5m, which tore down at once", `teardown: {policy: AfterTTL, ttl: -5m}`, refusedAt("spec.teardown.ttl", "teardown.ttl must be a positive duration")),
		Entry("a ttl of 0s", `teardown: {policy: AfterTTL, ttl: 0s}`, refusedAt("spec.teardown.ttl", "positive duration")),
		Entry("a ttl over a year", `teardown: {policy: AfterTTL, ttl: 8761h}`, refusedAt("spec.teardown.ttl", "at most 8760h")),
		Entry("a ttl that overflows a Go duration", `teardown: {policy: AfterTTL, ttl: 99999999999h}`, refusedAt("spec.teardown.ttl", "")),
		Entry("a ttl in a unit Go does not know", `teardown: {policy: AfterTTL, ttl: 5min}`, refusedAt("spec.teardown.ttl", "positive duration")),

		// storage.path: where the operator's root pods create and remove directories (item 9).
		Entry("the root directory", `storage: {path: /}`, refusedAt("spec.storage.path", "storage.path must be an absolute path")),
		Entry("/etc", `storage: {path: /etc}`, refusedAt("spec.storage.path", "must not be a system directory")),
		Entry("a directory below /etc", `storage: {path: /etc/beeburst}`, refusedAt("spec.storage.path", "must not be a system directory")),
		Entry("below /usr", `storage: {path: /usr/local/nvme}`, refusedAt("spec.storage.path", "must not be a system directory")),
		Entry("below /proc", `storage: {path: /proc/self/root}`, refusedAt("spec.storage.path", "must not be a system directory")),
		Entry("below /sys", `storage: {path: /sys/fs/cgroup}`, refusedAt("spec.storage.path", "must not be a system directory")),
		Entry("a device node", `storage: {path: /dev/nvme0n1}`, refusedAt("spec.storage.path", "must not be a system directory")),
		Entry("below /boot", `storage: {path: /boot/efi}`, refusedAt("spec.storage.path", "must not be a system directory")),
		Entry("root's home", `storage: {path: /root/scratch}`, refusedAt("spec.storage.path", "must not be a system directory")),
		Entry("a user's home", `storage: {path: /home/alice/scratch}`, refusedAt("spec.storage.path", "must not be a system directory")),
		Entry("the client mounts' root", `storage: {path: /run/beeburst}`, refusedAt("spec.storage.path", "must not be a system directory")),
		Entry("below /var/run", `storage: {path: /var/run/docker}`, refusedAt("spec.storage.path", "must not be a system directory")),
		Entry("the kubelet's pods", `storage: {path: /var/lib/kubelet/pods}`, refusedAt("spec.storage.path", "must not be a system directory")),
		Entry("/var/lib itself", `storage: {path: /var/lib}`, refusedAt("spec.storage.path", "must not be a system directory")),
		Entry("/lib64", `storage: {path: /lib64}`, refusedAt("spec.storage.path", "must not be a system directory")),
		Entry("a path that climbs out of /mnt", `storage: {path: /mnt/../etc}`, refusedAt("spec.storage.path", "must not contain '.' or '..' segments")),
		Entry("a '.' segment", `storage: {path: /mnt/./nvme}`, refusedAt("spec.storage.path", "must not contain '.' or '..' segments")),
		Entry("an empty segment", `storage: {path: /mnt//nvme}`, refusedAt("spec.storage.path", "no empty segment")),
		Entry("a trailing slash", `storage: {path: /mnt/nvme/}`, refusedAt("spec.storage.path", "no trailing '/'")),
		Entry("a space", `storage: {path: /mnt/nv me}`, refusedAt("spec.storage.path", "letters, digits and . _ - + @")),
		Entry("a newline", `storage: {path: "/mnt/nvme\n/etc"}`, refusedAt("spec.storage.path", "letters, digits and . _ - + @")),
		Entry("a NUL byte", `storage: {path: "/mnt/nvme\0"}`, refusedAt("spec.storage.path", "letters, digits and . _ - + @")),
		Entry("a command substitution", `storage: {path: "/mnt/$(reboot)"}`, refusedAt("spec.storage.path", "letters, digits and . _ - + @")),
		Entry("a command separator", `storage: {path: "/mnt/nvme;reboot"}`, refusedAt("spec.storage.path", "letters, digits and . _ - + @")),
		Entry("a relative path", `storage: {path: mnt/nvme}`, refusedAt("spec.storage.path", "storage.path must be an absolute path")),
		Entry("a path of 300 characters", `storage: {path: /mnt/`+strings.Repeat("a", 300)+`}`, refusedAt("spec.storage.path", "Too long")),

		// storage.path outside the administrator's roots: only the operator knows them.
		Entry("a path outside the allowed roots", `storage: {path: /opt/nvme}`, failsBeforePods(v1alpha1.ReasonStoragePathNotAllowed, "spec.storage.path /opt/nvme is not below a root the operator allows ("+allowedRootsFlag)),
		Entry("/tmp", `storage: {path: /tmp/scratch}`, failsBeforePods(v1alpha1.ReasonStoragePathNotAllowed, "spec.storage.path /tmp/scratch is not below a root")),
		Entry("a name that only starts like an allowed root", `storage: {path: /mntx/nvme}`, failsBeforePods(v1alpha1.ReasonStoragePathNotAllowed, "spec.storage.path /mntx/nvme is not below a root")),
		Entry("/data, not allowed by default", `storage: {path: /data}`, failsBeforePods(v1alpha1.ReasonStoragePathNotAllowed, "Helm value storage.allowedRoots")),

		// Capacity (item 6).
		Entry("100Pi per node", `storage: {capacityPerNode: 100Pi}`, refusedAt("spec.storage.capacityPerNode", "storage.capacityPerNode must be at most 1Pi")),
		Entry("zero capacity", `storage: {capacityPerNode: 0}`, refusedAt("spec.storage.capacityPerNode", "must be greater than zero")),
		Entry("negative capacity", `storage: {capacityPerNode: -1Gi}`, refusedAt("spec.storage.capacityPerNode", "must be greater than zero")),
		Entry("more capacity than the node has free", `{storage: {capacityPerNode: 10Gi}, validation: {profile: quick}}`, outcome{
			condition: v1alpha1.ConditionComponentsMeasured, reason: v1alpha1.ReasonInsufficientCapacity, phase: v1alpha1.PhaseFailed,
			text: "spec.storage.capacityPerNode 10Gi does not fit: node bb-test-",
			play: func(ctx context.Context, ns, name string) {
				finishPod(ctx, ns, name+"-prep-0", corev1.PodSucceeded, "")
				// The device probe saw 4 GiB free (deviceReport's FreeBytes).
				finishPod(ctx, ns, name+"-probe-dev-0", corev1.PodSucceeded, deviceReport(ns+"-a", 300e6, 400e6))
				// The sweep, chained after it (quick profile), is stopped: it must not measure
				// a spec the nodes refuse.
				stopped(ctx, ns, name, name+"-sweep-0-0")
			},
		}),

		// BeeGFS interfaces: rendered into connInterfacesList and daemon arguments (item 9).
		Entry("an interface name that injects a config line", `beegfs: {interfaces: ["ib0\nx=/"]}`, refusedAt("spec.beegfs.interfaces", "each must be a Linux interface name")),
		Entry("a long interface name that injects a config line", `beegfs: {interfaces: ["eth0\nconnAuthFile=/dev/null"]}`, refusedAt("spec.beegfs.interfaces[0]", "Too long: may not be more than 15 bytes")),
		Entry("two names in one", `beegfs: {interfaces: [ib0 eth0]}`, refusedAt("spec.beegfs.interfaces", "each must be a Linux interface name")),
		Entry("an interface name over IFNAMSIZ", `beegfs: {interfaces: [averyverylongnic]}`, refusedAt("spec.beegfs.interfaces", "15")),
		Entry("an interface name with '/'", `beegfs: {interfaces: [eth/0]}`, refusedAt("spec.beegfs.interfaces", "each must be a Linux interface name")),
		Entry("an interface named '..'", `beegfs: {interfaces: [".."]}`, refusedAt("spec.beegfs.interfaces", "each must be a Linux interface name")),
		Entry("an interface named '.'", `beegfs: {interfaces: ["."]}`, refusedAt("spec.beegfs.interfaces", "each must be a Linux interface name")),
		Entry("an empty interface name", `beegfs: {interfaces: [""]}`, refusedAt("spec.beegfs.interfaces", "each must be a Linux interface name")),
		Entry("an interface list in one name", `beegfs: {interfaces: ["eth0,eth1"]}`, refusedAt("spec.beegfs.interfaces", "each must be a Linux interface name")),
		Entry("an interface alias with ':'", `beegfs: {interfaces: ["eth0:1"]}`, refusedAt("spec.beegfs.interfaces", "each must be a Linux interface name")),
		Entry("an interface name that comments the rest out", `beegfs: {interfaces: ["eth0#"]}`, refusedAt("spec.beegfs.interfaces", "each must be a Linux interface name")),

		// BeeGFS images.
		Entry("an image with a shell command", `beegfs: {images: {storage: "ghcr.io/thinkparq/beegfs-storage:8.2; rm -rf /"}}`, refusedAt("spec.beegfs.images.storage", "must be an image reference")),
		Entry("an image with an upper-case repository", `beegfs: {images: {management: Ghcr.io/ThinkParQ/Mgmtd}}`, refusedAt("spec.beegfs.images.management", "must be an image reference")),
		Entry("an image with a newline", `beegfs: {images: {client: "ghcr.io/beeburst/beegfs-tools:8.2\n"}}`, refusedAt("spec.beegfs.images.client", "must be an image reference")),
		Entry("an image with a short digest", `beegfs: {images: {metadata: "ghcr.io/thinkparq/beegfs-meta@sha256:abc"}}`, refusedAt("spec.beegfs.images.metadata", "must be an image reference")),

		// workload.mountPath: a volume mount in the job's pods and BEEBURST_PATH in their environment.
		Entry("a mount over the container's root", `workload: {mountPath: /}`, refusedAt("spec.workload.mountPath", "workload.mountPath must be an absolute path")),
		Entry("a mount over /proc", `workload: {mountPath: /proc}`, refusedAt("spec.workload.mountPath", "must not be /proc, /sys or /dev")),
		Entry("a mount below /dev", `workload: {mountPath: /dev/shm}`, refusedAt("spec.workload.mountPath", "must not be /proc, /sys or /dev")),
		Entry("a mount path that injects an environment line", `workload: {mountPath: "/mnt/beeburst\nLD_PRELOAD=/x.so"}`, refusedAt("spec.workload.mountPath", "letters, digits and . _ - + @")),
		Entry("a relative mount path", `workload: {mountPath: scratch}`, refusedAt("spec.workload.mountPath", "workload.mountPath must be an absolute path")),
		Entry("a mount path that climbs", `workload: {mountPath: /mnt/../etc}`, refusedAt("spec.workload.mountPath", "must not contain '.' or '..' segments")),

		// Stage-in and stage-out: copy pods' arguments, volumes and the object store's URL.
		Entry("a stage path with a newline", `stageIn: [{path: "in\nout", persistentVolumeClaim: {claimName: data}}]`, refusedAt("spec.stageIn[0].path", "path must not contain control characters")),
		Entry("an absolute stage path", `stageIn: [{path: /etc, persistentVolumeClaim: {claimName: data}}]`, refusedAt("spec.stageIn[0].path", "must be relative to the burst buffer's root")),
		Entry("a claim name with upper case", `stageOut: [{path: results, persistentVolumeClaim: {claimName: Results_1}}]`, refusedAt("spec.stageOut[0].persistentVolumeClaim.claimName", "must be a claim name")),
		Entry("a claim name that climbs", `stageOut: [{path: results, persistentVolumeClaim: {claimName: ../secrets}}]`, refusedAt("spec.stageOut[0].persistentVolumeClaim.claimName", "must be a claim name")),
		Entry("a claim path with a tab", `stageIn: [{path: in, persistentVolumeClaim: {claimName: data, path: "run-1\t"}}]`, refusedAt("spec.stageIn[0].persistentVolumeClaim.path", "must not contain control characters")),
		Entry("an object key with a newline", `stageIn: [{path: in, s3: {url: "s3://bucket/run\n1"}}]`, refusedAt("spec.stageIn[0].s3.url", "s3.url must not contain control characters")),
		Entry("an object store URL with a query", `stageIn: [{path: in, s3: {url: "s3://bucket/x?endpoint=http://evil"}}]`, refusedAt("spec.stageIn[0].s3.url", "should match")),
		Entry("an endpoint with credentials in it", `stageOut: [{path: out, s3: {url: "s3://bucket/x", endpoint: "http://key:secret@minio:9000"}}]`, refusedAt("spec.stageOut[0].s3.endpoint", "without user information")),
		Entry("an endpoint with a space", `stageOut: [{path: out, s3: {url: "s3://bucket/x", endpoint: "http://minio 9000"}}]`, refusedAt("spec.stageOut[0].s3.endpoint", "without user information ('@'), whitespace")),
		Entry("a region with spaces", `stageIn: [{path: in, s3: {url: "s3://bucket/x", region: "eu central 1"}}]`, refusedAt("spec.stageIn[0].s3.region", "s3.region must be letters, digits")),
		Entry("a credentials Secret that is no Secret name", `stageIn: [{path: in, s3: {url: "s3://bucket/x", credentialsSecret: Store_Keys}}]`, refusedAt("spec.stageIn[0].s3.credentialsSecret", "must be a Secret name")),

		// Figures and shapes out of any sensible range.
		Entry("client nodes beyond int32", `hardware: {clients: {nodes: 3000000000}}`, refusedAt("spec.hardware.clients.nodes", "less than or equal to 100000")),
		Entry("100000 processes per node", `hardware: {clients: {processesPerNode: 100000}}`, refusedAt("spec.hardware.clients.processesPerNode", "less than or equal to 4096")),
		Entry("zero server nodes", `hardware: {servers: {nodes: 0}}`, refusedAt("spec.hardware.servers.nodes", "greater than or equal to 1")),
		Entry("a link of 1e29 bit/s", `hardware: {clients: {link: {rateBitsPerSecond: "1e29"}}}`, refusedAt("spec.hardware.clients.link.rateBitsPerSecond", "at most 100T")),
		Entry("1000 devices per node", `hardware: {devices: {perNode: 1000}}`, refusedAt("spec.hardware.devices.perNode", "less than or equal to 64")),
		Entry("a 5 TB/s device", `hardware: {devices: {writeBytesPerSecond: 5T}}`, refusedAt("spec.hardware.devices.writeBytesPerSecond", "at most 1T")),
		Entry("a fabric of 10 Ebit/s", `hardware: {fabric: {bisectionBitsPerSecond: 10E}}`, refusedAt("spec.hardware.fabric.bisectionBitsPerSecond", "at most 1E")),
		Entry("a sweep over 2000 nodes", `validation: {sweep: {nodes: [2000]}}`, refusedAt("spec.validation.sweep.nodes[0]", "less than or equal to 1024")),
		Entry("a 2Gi block size", `validation: {sweep: {blockSize: 2Gi}}`, refusedAt("spec.validation.sweep.blockSize", "at most 1Gi")),
		Entry("17 targets per node", `layout: {storageTargetsPerNode: 17}`, refusedAt("spec.layout.storageTargetsPerNode", "less than or equal to 16")),
		Entry("a stripe width of 0", `layout: {stripeWidth: 0}`, refusedAt("spec.layout.stripeWidth", "greater than or equal to 1")),
		Entry("5000 nodes", `nodes: {count: 5000}`, refusedAt("spec.nodes.count", "less than or equal to 1024")),

		// Sizing: a target, the chunk-size policy, the workload pattern, a comparison.
		Entry("a target with no figure", `target: {marginPercent: 20}`, refusedAt("spec.target", "target must name at least one figure: writeBytesPerSecond, readBytesPerSecond, capacity or metadataOperationsPerSecond")),
		Entry("a target of zero bytes per second", `target: {writeBytesPerSecond: 0}`, refusedAt("spec.target.writeBytesPerSecond", "target.writeBytesPerSecond must be greater than zero")),
		Entry("a negative read target", `target: {readBytesPerSecond: -1G}`, refusedAt("spec.target.readBytesPerSecond", "target.readBytesPerSecond must be greater than zero")),
		Entry("a write target of 2 PB/s, a unit mistake", `target: {writeBytesPerSecond: 2P}`, refusedAt("spec.target.writeBytesPerSecond", "must be at most 1P (1 PB/s); it is in bytes per second")),
		Entry("a capacity target of 2Ei", `target: {capacity: 2Ei}`, refusedAt("spec.target.capacity", "target.capacity must be at most 1Ei")),
		Entry("a zero capacity target", `target: {capacity: "0"}`, refusedAt("spec.target.capacity", "target.capacity must be greater than zero")),
		Entry("zero metadata operations", `target: {metadataOperationsPerSecond: 0}`, refusedAt("spec.target.metadataOperationsPerSecond", "greater than or equal to 1")),
		Entry("1e12 metadata operations", `target: {metadataOperationsPerSecond: 1000000000000}`, refusedAt("spec.target.metadataOperationsPerSecond", "less than or equal to 10000000000")),
		Entry("a margin of 150%", `target: {writeBytesPerSecond: 1G, marginPercent: 150}`, refusedAt("spec.target.marginPercent", "less than or equal to 100")),
		Entry("an unknown chunk-size policy", `layout: {chunkSizePolicy: Best}`, refusedAt("spec.layout.chunkSizePolicy", "Unsupported value")),
		Entry("chunk-size tuning on the local engine", `{validation: {profile: quick}, layout: {chunkSizePolicy: Auto}}`, refusedAt("spec", "layout.chunkSizePolicy Auto tunes BeeGFS's stripe chunk size: it needs engine beegfs")),
		Entry("chunk-size tuning without measuring", `{engine: beegfs, layout: {chunkSizePolicy: Auto}}`, refusedAt("spec", "layout.chunkSizePolicy Auto measures each chunk size on the new file system: it needs validation.profile quick or standard, not none")),
		Entry("an unknown workload pattern", `workload: {pattern: Striped}`, refusedAt("spec.workload.pattern", "Unsupported value")),
		Entry("a comparison with two things", `validation: {profile: quick, compareWith: {persistentVolumeClaim: {claimName: data}, nodeLocal: {path: /scratch}}}`, refusedAt("spec.validation.compareWith", "validation.compareWith needs exactly one of persistentVolumeClaim and nodeLocal")),
		Entry("a comparison with nothing", `validation: {profile: quick, compareWith: {}}`, refusedAt("spec.validation.compareWith", "exactly one of persistentVolumeClaim and nodeLocal")),
		Entry("a comparison without measuring", `validation: {compareWith: {persistentVolumeClaim: {claimName: data}}}`, refusedAt("spec", "validation.compareWith runs the ideal workload on the burst buffer and on the other storage: it needs validation.profile quick or standard")),
		Entry("the local engine compared with its own drive", `validation: {profile: quick, compareWith: {nodeLocal: {}}}`, refusedAt("spec", "validation.compareWith.nodeLocal would compare the local engine with its own drive")),
		Entry("the local engine compared with its own path, named", `validation: {profile: quick, compareWith: {nodeLocal: {path: /mnt/nvme}}}`, refusedAt("spec", "would compare the local engine with its own drive")),
		Entry("a comparison on /etc", `validation: {profile: quick, compareWith: {nodeLocal: {path: /etc/x}}}`, refusedAt("spec.validation.compareWith.nodeLocal.path", "compareWith.nodeLocal.path must not be a system directory")),
		Entry("a comparison path that climbs", `validation: {profile: quick, compareWith: {nodeLocal: {path: /scratch/../etc}}}`, refusedAt("spec.validation.compareWith.nodeLocal.path", "must not contain '.' or '..' segments")),
		Entry("a comparison claim that is no claim name", `validation: {profile: quick, compareWith: {persistentVolumeClaim: {claimName: "Data 1"}}}`, refusedAt("spec.validation.compareWith.persistentVolumeClaim.claimName", "must be a claim name")),

		// Label selectors: the CRD schema cannot check their syntax; the operator does.
		Entry("a node selector with an unknown operator", `nodes: {selector: {matchExpressions: [{key: zone, operator: Near, values: [a]}]}}`,
			failsBeforePods(v1alpha1.ReasonInvalidSpec, "spec.nodes.selector")),
		Entry("a node selector with a space in a value", `nodes: {selector: {matchLabels: {rack: "a b"}}}`,
			failsBeforePods(v1alpha1.ReasonInvalidSpec, "spec.nodes.selector")),
		Entry("a workload selector 'In' nothing", `workload: {selector: {matchExpressions: [{key: app, operator: In}]}}`,
			failsBeforePods(v1alpha1.ReasonInvalidSpec, "spec.workload.selector")),
		Entry("a workload selector with a bad key", `workload: {selector: {matchLabels: {"a/b/c": x}}}`,
			failsBeforePods(v1alpha1.ReasonInvalidSpec, "spec.workload.selector")),
		Entry("more nodes than exist", `nodes: {count: 3}`, outcome{
			condition: v1alpha1.ConditionProvisioned, reason: v1alpha1.ReasonNodesNotFound, phase: v1alpha1.PhasePending,
			text: "1 Ready, schedulable node(s) match spec.nodes, 3 wanted",
		}),
	)

	// The sizing fields, valid: the API server takes them, and a target chosen at creation
	// stays.
	It("takes a target, a pattern, chunk-size tuning and a comparison, and keeps the target", func() {
		bb := localBB(ns, "sized", 1)
		bb.Spec.Target = &v1alpha1.TargetSpec{WriteBytesPerSecond: ptr.To(resourceMust("250M")), ReadBytesPerSecond: ptr.To(resourceMust("500M")),
			Capacity: ptr.To(resourceMust("10Gi")), MetadataOperationsPerSecond: ptr.To(int64(50000)), MarginPercent: 20}
		bb.Spec.Workload.Pattern = v1alpha1.PatternSharedFile
		createReady(ctx, bb)
		cur := get(ctx, bb)
		Expect(cur.Spec.Target.MarginPercent).To(Equal(int32(20)))
		for _, mutate := range []func(*v1alpha1.BurstBuffer){
			func(b *v1alpha1.BurstBuffer) { b.Spec.Target.WriteBytesPerSecond = ptr.To(resourceMust("1G")) },
			func(b *v1alpha1.BurstBuffer) { b.Spec.Target = nil },
		} {
			var err error
			Eventually(func() bool {
				c := get(ctx, bb)
				mutate(c)
				err = k8s.Update(ctx, c)
				return !apierrors.IsConflict(err)
			}, timeout).Should(BeTrue())
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
			Expect(err.Error()).To(Or(ContainSubstring("target is immutable"), ContainSubstring("target cannot be added or removed")))
		}

		// On no node (the selector matches none): only the API server's part is tested here.
		beegfs := unstructuredBB(ns, "tuned", `engine: beegfs
nodes: {count: 1, selector: {matchLabels: {pool: nowhere}}}
layout: {chunkSizePolicy: Auto}
workload: {pattern: LargeSequential}
validation: {profile: quick, compareWith: {nodeLocal: {path: /scratch}}}
target: {writeBytesPerSecond: 2G}`)
		Expect(k8s.Create(ctx, beegfs)).To(Succeed())
		b := &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tuned"}}
		Expect(get(ctx, b).Spec.Target.MarginPercent).To(Equal(int32(10)), "the margin's default")
		deleteAndWait(ctx, b)
	})

	// Where data lives cannot change after creation (item 4); what a user needs to go on
	// can: fix a failing stage-out, give the data up, extend a TTL.
	DescribeTable("after creation",
		func(mutate func(*v1alpha1.BurstBuffer), refusal string) {
			bb := localBB(ns, "live", 1)
			bb.Spec.Teardown = v1alpha1.TeardownSpec{Policy: v1alpha1.TeardownManual}
			bb.Spec.StageOut = []v1alpha1.StageSpec{{Path: "results", PersistentVolumeClaim: v1alpha1.PVCSource{ClaimName: "out"}}}
			createReady(ctx, bb)
			var err error
			// The operator writes the object too: retry on conflicts only.
			Eventually(func() bool {
				cur := get(ctx, bb)
				mutate(cur)
				err = k8s.Update(ctx, cur)
				return !apierrors.IsConflict(err)
			}, timeout).Should(BeTrue())
			if refusal == "" {
				Expect(err).NotTo(HaveOccurred())
			} else {
				Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
				Expect(err.Error()).To(ContainSubstring(refusal))
			}
			Expect(get(ctx, bb).Status.Nodes[0].Path).To(Equal("/mnt/nvme/beeburst/" + ns + ".live"))
		},
		Entry("refuses another storage path", func(b *v1alpha1.BurstBuffer) { b.Spec.Storage.Path = "/mnt/other" }, "storage is immutable"),
		Entry("refuses another capacity", func(b *v1alpha1.BurstBuffer) { b.Spec.Storage.CapacityPerNode = ptr.To(resourceMust("1Gi")) }, "storage is immutable"),
		Entry("refuses another chunk size", func(b *v1alpha1.BurstBuffer) { b.Spec.Layout.ChunkSize = ptr.To(resourceMust("1Mi")) }, "layout is immutable"),
		Entry("refuses more targets per node", func(b *v1alpha1.BurstBuffer) { b.Spec.Layout.StorageTargetsPerNode = 2 }, "layout is immutable"),
		Entry("refuses a stripe width added later", func(b *v1alpha1.BurstBuffer) { b.Spec.Layout.StripeWidth = ptr.To(int32(1)) }, "layout is immutable"),
		Entry("refuses another engine", func(b *v1alpha1.BurstBuffer) { b.Spec.Engine = v1alpha1.EngineBeeGFS }, "engine is immutable"),
		Entry("refuses other nodes", func(b *v1alpha1.BurstBuffer) { b.Spec.Nodes.FromWorkload = true }, "nodes is immutable"),
		Entry("refuses a target added later", func(b *v1alpha1.BurstBuffer) {
			b.Spec.Target = &v1alpha1.TargetSpec{WriteBytesPerSecond: ptr.To(resourceMust("1G")), MarginPercent: 10}
		}, "target cannot be added or removed after creation"),
		Entry("refuses a workload pattern set later", func(b *v1alpha1.BurstBuffer) { b.Spec.Workload.Pattern = v1alpha1.PatternSharedFile }, "workload.pattern is immutable"),
		Entry("accepts a comparison set later", func(b *v1alpha1.BurstBuffer) {
			b.Spec.Validation.CompareWith = &v1alpha1.CompareWithSpec{PersistentVolumeClaim: &v1alpha1.PVCSource{ClaimName: "data"}}
			b.Spec.Validation.Profile = v1alpha1.ProfileQuick
		}, ""),
		Entry("refuses a bad ttl in an update too", func(b *v1alpha1.BurstBuffer) {
			b.Spec.Teardown = v1alpha1.TeardownSpec{Policy: v1alpha1.TeardownAfterTTL, TTL: "-5m"}
		}, "teardown.ttl must be a positive duration"),
		Entry("accepts a corrected stage-out", func(b *v1alpha1.BurstBuffer) { b.Spec.StageOut[0].PersistentVolumeClaim.ClaimName = "results" }, ""),
		Entry("accepts hurry", func(b *v1alpha1.BurstBuffer) { b.Spec.Teardown.Hurry = true }, ""),
		Entry("accepts a TTL policy set later", func(b *v1alpha1.BurstBuffer) {
			b.Spec.Teardown = v1alpha1.TeardownSpec{Policy: v1alpha1.TeardownAfterTTL, TTL: "12h"}
		}, ""),
	)
})

// Objects the API server refuses today can still be stored: through an older CRD, a backup, or
// anything else that writes to etcd. Each must fail alone, naming its field, while every other
// burst buffer keeps reconciling - also across a manager restart, whose first list of
// BurstBuffers includes them (one such object must not stop all reconciliation).
var _ = Describe("Objects stored before the CRD's rules", Serial, func() {
	It("fail alone with the field named, while the other burst buffers keep reconciling, across a manager restart", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		makeNode(ctx, ns+"-a", map[string]string{"pool": ns})
		steady := localBB(ns, "steady", 1)
		createReady(ctx, steady)

		// An older CRD: a spec schema with no types and no rules, where anything goes.
		restore := loosenCRD(ctx)
		DeferCleanup(restore)
		base := "engine: local\nnodes: {count: 1, selector: {matchLabels: {pool: " + ns + "}}}\nstorage: {path: /mnt/nvme}\nvalidation: {profile: none}\n"
		stored := map[string]struct{ spec, field string }{
			"old-budget": {base + "validation: {profile: none, timeBudget: forever}", `spec.validation.timeBudget: Invalid value: "forever"`},
			"old-reuse":  {base + "validation: {profile: none, reuseComponentResultsFor: yesterday}", `spec.validation.reuseComponentResultsFor: Invalid value: "yesterday"`},
			"old-ttl":    {base + "teardown: {policy: AfterTTL, ttl: -5m}", `spec.teardown.ttl: Invalid value: "-5m"`},
			"old-iface":  {base + `beegfs: {interfaces: ["eth0\nconnAuthFile=/dev/null"]}`, `spec.beegfs.interfaces[0]: Invalid value: "eth0\nconnAuthFile=/dev/null"`},
			"old-path":   {strings.Replace(base, "/mnt/nvme", "/etc", 1), `spec.storage.path: Invalid value: "/etc"`},
		}
		for name, o := range stored {
			Expect(k8s.Create(ctx, unstructuredBB(ns, name, o.spec))).To(Succeed(), "%s", name)
		}
		// A string where Go has an int32: this one cannot even be decoded.
		undecodable := unstructuredBB(ns, "old-count", strings.Replace(base, "count: 1", "count: two", 1))
		Expect(k8s.Create(ctx, undecodable)).To(Succeed())
		restore()

		// The manager lists and watches them all; every other burst buffer is reconciled.
		after := localBB(ns, "after", 1)
		createReady(ctx, after)

		for name, o := range stored {
			bb := &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
			Eventually(condition(ctx, bb, v1alpha1.ConditionProvisioned), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonInvalidSpec), "%s", name)
			Expect(condition(ctx, bb, v1alpha1.ConditionProvisioned)().Message).To(ContainSubstring(o.field), "%s", name)
			Expect(phase(ctx, bb)()).To(Equal(v1alpha1.PhaseFailed), "%s", name)
			Expect(podsOf(ctx, ns, name)).To(BeEmpty(), "%s", name)
		}
		// The undecodable one: a Warning event and Ready=False naming the field, no finalizer,
		// nothing done on its behalf.
		ub := &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "old-count"}}
		Eventually(warningEvents(ctx, ns, "old-count", v1alpha1.ReasonInvalidSpec), timeout).Should(ContainElement(ContainSubstring("nodes.count")))
		Eventually(condition(ctx, ub, v1alpha1.ConditionReady), timeout).Should(haveStatus(metav1.ConditionFalse, v1alpha1.ReasonInvalidSpec))
		Expect(condition(ctx, ub, v1alpha1.ConditionReady)().Message).To(ContainSubstring("cannot unmarshal string into Go struct field NodesSpec.nodes.count of type int32"))
		Expect(get(ctx, ub).Undecodable()).To(ContainSubstring("nodes.count"), "the typed client reads it too")
		Expect(get(ctx, ub).Finalizers).To(BeEmpty())
		Expect(podsOf(ctx, ns, "old-count")).To(BeEmpty())

		// A restarted manager syncs its caches with all of them present and goes on.
		stopManager()
		startManager()
		restarted := localBB(ns, "restarted", 1)
		createReady(ctx, restarted)

		// Every one of them goes away when deleted; the good ones tear down as usual.
		for name := range stored {
			deleteAndWait(ctx, &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
		}
		deleteAndWait(ctx, ub)
		for _, bb := range []*v1alpha1.BurstBuffer{steady, after, restarted} {
			Expect(k8s.Delete(ctx, bb)).To(Succeed())
			finishPod(ctx, ns, bb.Name+"-clean-0", corev1.PodSucceeded, "")
			Eventually(gone(ctx, bb), timeout).Should(BeTrue(), "%s", bb.Name)
		}
	})
})
