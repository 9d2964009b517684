package e2e

import (
	"archive/tar"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/engine/beegfs"
	"github.com/beeburst/beeburst/internal/nodetask"
)

// The beegfs engine against a real BeeGFS. It needs nodes whose kernel has the BeeGFS client
// module loaded and the BeeGFS images in their container runtime; on the testbed that is
// `make test-e2e-beegfs` with BEEBURST_BEEGFS_MODULE (a beegfs.ko for the guests' kernel) and
// BEEBURST_BEEGFS_IMAGES (mgmtd.tar, meta.tar, storage.tar, client.tar), which brings up QEMU
// workers that load the module (hack/testbed/vm). Elsewhere (CI: BeeGFS is in no registry we
// reach) every spec here skips and says why.
//
// Nodes: those labelled testbed.beeburst.io/kind=vm, else BEEBURST_BEEGFS_NODE_SELECTOR
// (key=value) on another cluster.

const vmKindLabel = "testbed.beeburst.io/kind"

var _ = Describe("beegfs on a real BeeGFS", Ordered, Label("beegfs"), func() {
	var (
		ctx      = context.Background()
		images   *v1alpha1.BeeGFSImages
		selector map[string]string
		nodes    []string
		timeline = map[string]string{} // figures for the report, by burst buffer
		// readySince: when the first burst buffer's Provisioned and Ready conditions last
		// changed, once it was Ready (upSince).
		readySince string
	)

	BeforeAll(func() {
		dir := os.Getenv("BEEBURST_BEEGFS_IMAGES")
		if dir == "" {
			Skip("no BeeGFS here: set BEEBURST_BEEGFS_IMAGES (mgmtd.tar, meta.tar, storage.tar, client.tar) and BEEBURST_BEEGFS_MODULE (beegfs.ko) and run `make test-e2e-beegfs` (docs/beegfs.md)")
		}
		images = &v1alpha1.BeeGFSImages{
			Management: v1alpha1.ImageReference(imageName(filepath.Join(dir, "mgmtd.tar"))),
			Metadata:   v1alpha1.ImageReference(imageName(filepath.Join(dir, "meta.tar"))),
			Storage:    v1alpha1.ImageReference(imageName(filepath.Join(dir, "storage.tar"))),
			Client:     v1alpha1.ImageReference(imageName(filepath.Join(dir, "client.tar"))),
		}
		selector = map[string]string{vmKindLabel: "vm"}
		if s := os.Getenv("BEEBURST_BEEGFS_NODE_SELECTOR"); s != "" {
			k, v, _ := strings.Cut(s, "=")
			selector = map[string]string{k: v}
		}
		var list corev1.NodeList
		Expect(k8s.List(ctx, &list, client.MatchingLabels(selector))).To(Succeed())
		for _, n := range list.Items {
			nodes = append(nodes, n.Name)
		}
		sort.Strings(nodes)
		if len(nodes) < 2 {
			Skip(fmt.Sprintf("needs 2 nodes with the BeeGFS client module (labelled %v), found %d", selector, len(nodes)))
		}
		nodes = nodes[:2]
		// The operator runs elsewhere when the cluster has other nodes (on the testbed: the
		// namespace node, not an emulated guest).
		installOperator("--set", "nodeSelector."+strings.ReplaceAll(vmKindLabel, ".", `\.`)+"=netns")
	})

	bbFor := func(name string, profile v1alpha1.ValidationProfile) *v1alpha1.BurstBuffer {
		return &v1alpha1.BurstBuffer{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNamespace},
			Spec: v1alpha1.BurstBufferSpec{
				Engine:     v1alpha1.EngineBeeGFS,
				Nodes:      v1alpha1.NodesSpec{Count: 2, Selector: &metav1.LabelSelector{MatchLabels: selector}},
				Validation: v1alpha1.ValidationSpec{Profile: profile},
				BeeGFS:     &v1alpha1.BeeGFSSpec{Images: images},
			},
		}
	}

	It("provisions with authentication and TLS, mounts on every node, measures through the client, and is Ready", func() {
		bb := bbFor("bgfs", v1alpha1.ProfileQuick)
		start := time.Now()
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		steps := waitReady(ctx, bb, start, 30*time.Minute)
		timeline[bb.Name] = steps
		expectNoPhaseBack(bb.Name)
		cur := get(ctx, bb)
		readySince = upSince(cur)
		Expect(cur.Status.BeeGFS).NotTo(BeNil())
		// The Secret lives in the operator's namespace, named with the burst buffer's
		// namespace's prefix there (nodetask.TaskName), which only the manager knows.
		Expect(cur.Status.BeeGFS.AuthSecretName).To(HaveSuffix(bb.Name+"-beegfs-auth"), "authentication and TLS are on")

		// Every target online and good, as mgmtd sees it (the CLI over TLS with the auth file).
		out := clientExec(bb, 0, beegfsCLI(cur)+" target list --state; true") // the CLI may exit 1 on its licence check alone (internal/engine/beegfs cliFunc)
		fmt.Fprintf(GinkgoWriter, "%s\n", out)
		Expect(regexp.MustCompile(`(?im)online.*good`).FindAllString(out, -1)).To(HaveLen(1+2), "1 metadata + 2 storage targets online and good:\n%s", out)

		// A file written on one node reads back on the other, byte for byte.
		mnt := cur.Status.Mount.HostPath
		sum1 := clientExec(bb, 0, fmt.Sprintf("mkdir -p %[1]s/e2e && dd if=/dev/urandom of=%[1]s/e2e/data bs=1M count=64 conv=fsync status=none && sha256sum %[1]s/e2e/data | cut -d' ' -f1", mnt))
		sum2 := clientExec(bb, 1, fmt.Sprintf("echo 3 > /proc/sys/vm/drop_caches; sha256sum %s/e2e/data | cut -d' ' -f1", mnt))
		Expect(strings.TrimSpace(sum1)).To(HaveLen(64))
		Expect(strings.TrimSpace(sum2)).To(Equal(strings.TrimSpace(sum1)), "written on %s, read on %s", nodes[0], nodes[1])

		// Through the claim, as a job sees it: a pod scheduled on each node, one file system.
		Expect(cur.Status.Mount.ClaimName).To(Equal(bb.Name))
		claimShell(ctx, testNamespace, "bgfs-w", bb.Name, nodes[1], "echo through-the-claim > /scratch/e2e/claimed")
		Expect(claimShell(ctx, testNamespace, "bgfs-r", bb.Name, nodes[0], "cat /scratch/e2e/claimed; sha256sum /scratch/e2e/data")).
			To(And(ContainSubstring("through-the-claim"), ContainSubstring(strings.TrimSpace(sum1))))

		// The stripe pattern of spec.layout (defaults: 512 KiB chunks over both targets).
		info := clientExec(bb, 0, beegfsCLI(cur)+" entry info "+mnt+"/e2e/data; true")
		fmt.Fprintf(GinkgoWriter, "%s\n", info)
		// beegfs-go prints the pattern as "RAID0 (<targets>x<chunk size>)" (ctl entry info).
		Expect(info).To(MatchRegexp(`(?i)\(2x512\s*Ki?B?\)`))

		// Stage 2: fio and StorageBench within the caps; stage 3 through the mount.
		l := cur.Status.Limits
		Expect(l.Components).NotTo(BeNil())
		Expect(l.Components.StorageBench).NotTo(BeNil())
		Expect(l.Components.StorageBench.Message).To(BeEmpty())
		report := steps
		for _, n := range l.Components.Nodes {
			capW, capR := nodeCap(n.Name, "WRITE"), nodeCap(n.Name, "READ")
			Expect(n.StorageBenchWrite).NotTo(BeNil(), "%s", n.Name)
			sbW, sbR := float64(*n.StorageBenchWrite.MeasuredBytesPerSecond), float64(*n.StorageBenchRead.MeasuredBytesPerSecond)
			fioW, fioR := float64(*n.DeviceWrite.MeasuredBytesPerSecond), float64(*n.DeviceRead.MeasuredBytesPerSecond)
			report += fmt.Sprintf("%s: write cap %s, fio %s, StorageBench %s; read cap %s, fio %s, StorageBench %s\n",
				n.Name, mbs(capW), mbs(fioW), mbs(sbW), mbs(capR), mbs(fioR), mbs(sbR))
			if capW > 0 {
				Expect(sbW).To(BeNumerically("<=", 1.15*capW), "StorageBench above the write cap of %s", n.Name)
				Expect(fioW).To(BeNumerically("<=", 1.15*capW), "fio above the write cap of %s", n.Name)
			}
			if capR > 0 {
				Expect(sbR).To(BeNumerically("<=", 1.15*capR), "StorageBench above the read cap of %s", n.Name)
			}
		}
		Expect(l.Sweep).NotTo(BeNil())
		Expect(l.Sweep.Write).NotTo(BeNil())
		Expect(cur.Status.Warnings).NotTo(ContainElement(HaveField("Reason", v1alpha1.WarningExceedsLimit)))
		report += fmt.Sprintf("stage 3 through the BeeGFS client: write best %s, efficiency %.3f\n",
			mbs(float64(l.Sweep.Write.BestBytesPerSecond)), float64(l.Sweep.Write.EfficiencyPerMille)/1000)
		// How long each client took from its pod's creation to a mount (its readiness probe).
		for _, p := range bbPods(ctx, bb.Name, map[string]string{"app.kubernetes.io/component": nodetask.ComponentClient}) {
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
					report += fmt.Sprintf("client on %s: mounted %.0f s after its pod was created (includes the image and container start on an emulated node)\n",
						p.Spec.NodeName, c.LastTransitionTime.Sub(p.CreationTimestamp.Time).Seconds())
				}
			}
		}
		wide, _ := kubectl("get", "bb", "-n", testNamespace, "-o", "wide")
		limits, _ := run("go", "run", "./cmd/kubectl-beeburst", "limits", "-n", testNamespace, bb.Name)
		report += wide + limits
		AddReportEntry("beegfs", report)
		fmt.Println(report)
	})

	It("runs a second burst buffer on the same nodes with its own port shift, isolated, converging after a manager restart mid-provisioning", func() {
		first := get(ctx, &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Name: "bgfs", Namespace: testNamespace}})
		bb := bbFor("bgfs2", v1alpha1.ProfileNone)
		start := time.Now()
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		// Kill the manager once the services are being started.
		Eventually(func() bool {
			return k8s.Get(ctx, taskPodKey("bgfs2-mgmtd-0"), &corev1.Pod{}) == nil
		}, 10*time.Minute, time.Second).Should(BeTrue())
		// The first one's phases so far: the killed manager's log goes with its pod.
		expectNoPhaseBack("bgfs")
		killManager(ctx)
		restarted := time.Now()
		timeline[bb.Name] = waitReady(ctx, bb, start, 20*time.Minute)
		fmt.Printf("bgfs2: Ready %.0f s after the manager was killed mid-provisioning\n", time.Since(restarted).Seconds())
		// The first one stayed Ready while the second was provisioned on its nodes (the
		// restarted manager's log covers the time since the kill; upSince all of it).
		expectNoPhaseBack("bgfs2", "bgfs")
		Expect(upSince(get(ctx, first))).To(Equal(readySince), "bgfs's Provisioned or Ready changed while bgfs2 came up beside it")

		cur := get(ctx, bb)
		Expect(cur.Status.BeeGFS.ConnPortShift).NotTo(Equal(first.Status.BeeGFS.ConnPortShift))
		// Nothing duplicated: one pod per component and index.
		seen := map[string]bool{}
		for _, p := range bbPods(ctx, "bgfs2", nil) {
			Expect(seen[p.Name]).To(BeFalse(), "%s", p.Name)
			seen[p.Name] = true
		}
		for _, name := range []string{"bgfs2-mgmtd-0", "bgfs2-meta-0", "bgfs2-storage-0", "bgfs2-storage-1", "bgfs2-client-0", "bgfs2-client-1"} {
			Expect(seen).To(HaveKey(taskPodKey(name).Name))
		}
		// Isolated: the first file system's file is not in the second.
		ls := clientExec(bb, 1, "ls -A "+cur.Status.Mount.HostPath+"; echo end")
		Expect(ls).NotTo(ContainSubstring("e2e"))
		Expect(clientExec(bb, 1, "echo two > "+cur.Status.Mount.HostPath+"/only-in-two && cat "+cur.Status.Mount.HostPath+"/only-in-two")).To(ContainSubstring("two"))
		Expect(clientExec(first, 1, "ls -A "+first.Status.Mount.HostPath+"; echo end")).NotTo(ContainSubstring("only-in-two"))
	})

	It("measures a local burst buffer on the same nodes for comparison", func() {
		bb := &v1alpha1.BurstBuffer{
			ObjectMeta: metav1.ObjectMeta{Name: "local-cmp", Namespace: testNamespace},
			Spec: v1alpha1.BurstBufferSpec{
				Engine: v1alpha1.EngineLocal,
				Nodes:  v1alpha1.NodesSpec{Count: 2, Selector: &metav1.LabelSelector{MatchLabels: selector}},
				// Its own device figures, not those the node cache kept from the beegfs
				// burst buffer, whose services shared the emulated CPUs.
				Validation: v1alpha1.ValidationSpec{Profile: v1alpha1.ProfileQuick, ReuseComponentResultsFor: v1alpha1.Duration("0s")},
			},
		}
		start := time.Now()
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		timeline[bb.Name] = waitReady(ctx, bb, start, 20*time.Minute)
		cur := get(ctx, bb)
		bg := get(ctx, &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Name: "bgfs", Namespace: testNamespace}})
		report := "stage 3 on the same nodes:\n" + sweepLine("local engine", cur) + sweepLine("beegfs through the client", bg)
		for _, w := range cur.Status.Warnings {
			report += fmt.Sprintf("  local warning %s: %s\n", w.Reason, oneLine(w.Message, 200))
		}
		expectNoPhaseBack("bgfs", "bgfs2")
		Expect(upSince(bg)).To(Equal(readySince), "bgfs's Provisioned or Ready changed while a local burst buffer measured its nodes")
		AddReportEntry("beegfs vs local", report)
		fmt.Print(report)
		deleteAndWait(ctx, bb, 10*time.Minute)
	})

	It("tears down: no pod, mount or target directory is left", func() {
		for _, name := range []string{"bgfs2", "bgfs"} {
			bb := get(ctx, &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNamespace}})
			mnt := bb.Status.Mount.HostPath
			start := time.Now()
			deleteAndWait(ctx, bb, 15*time.Minute)
			fmt.Printf("%s: deleted in %.1f s\n", name, time.Since(start).Seconds())
			// Ended pods are deleted as the finalizer goes; each is gone once its node's kubelet
			// confirms (slow on an emulated node).
			Eventually(func() []corev1.Pod { return bbPods(ctx, name, nil) }, 2*time.Minute, 2*time.Second).Should(BeEmpty())
			for _, node := range nodes {
				out := hostShell(ctx, node, fmt.Sprintf("cat /proc/1/mounts; echo ---; ls -A /host/nvme/beeburst 2>/dev/null; echo ---; ls -d /host/run%s 2>&1; true", strings.TrimPrefix(mnt, beegfs.MountRoot)))
				fmt.Fprintf(GinkgoWriter, "%s on %s:\n%s\n", name, node, out)
				parts := strings.SplitN(out, "---\n", 3)
				Expect(parts).To(HaveLen(3), "%s", out)
				Expect(parts[0]).To(ContainSubstring(" / "), "the node's mount table")
				Expect(parts[0]).NotTo(ContainSubstring(" "+mnt+" "), "a beegfs mount left on %s", node)
				Expect(strings.Fields(parts[1])).NotTo(ContainElement(testNamespace+"."+name), "a target directory left on %s", node)
				Expect(parts[2]).To(ContainSubstring("No such file"), "the mount point left on %s", node)
			}
		}
		for name, t := range timeline {
			fmt.Printf("---- %s\n%s", name, t)
		}
	})
})

// upSince says when bb's Provisioned and Ready conditions last changed, and how they stand:
// unchanged while neighbours come and go means the burst buffer never left Ready, through
// manager restarts too (a condition's lastTransitionTime moves only when its status does).
func upSince(bb *v1alpha1.BurstBuffer) string {
	var out []string
	for _, t := range []string{v1alpha1.ConditionProvisioned, v1alpha1.ConditionReady} {
		if c := meta.FindStatusCondition(bb.Status.Conditions, t); c != nil {
			out = append(out, fmt.Sprintf("%s=%s since %s", t, c.Status, c.LastTransitionTime.UTC().Format(time.RFC3339)))
		}
	}
	return strings.Join(out, ", ")
}

// phaseOrder ranks the phases a burst buffer passes on its way to Ready; any other phase
// reached from one of them is a step back.
var phaseOrder = map[v1alpha1.Phase]int{"": 0, v1alpha1.PhasePending: 1, v1alpha1.PhaseProvisioning: 2,
	v1alpha1.PhaseMeasuring: 3, v1alpha1.PhaseStagingIn: 4, v1alpha1.PhaseReady: 5}

// expectNoPhaseBack fails when the manager's log has a burst buffer's phase going back (to
// Provisioning from Measuring, or away from Ready): a busy client or service is not a file
// system that went away. The log has every change ("phase changed", logTransitions), where a
// poll of the status could miss a short one. It covers the manager's current pod only.
func expectNoPhaseBack(names ...string) {
	out, err := kubectl("-n", operatorNamespace, "logs", "deploy/beeburst-manager")
	Expect(err).NotTo(HaveOccurred(), "%s", out)
	for _, name := range names {
		var changes []string
		back := false
		for _, line := range strings.Split(out, "\n") {
			var l struct {
				Msg  string         `json:"msg"`
				TS   string         `json:"ts"`
				Name string         `json:"name"`
				NS   string         `json:"namespace"`
				From v1alpha1.Phase `json:"from"`
				To   v1alpha1.Phase `json:"phase"`
				Why  string         `json:"message"`
			}
			if json.Unmarshal([]byte(line), &l) != nil || l.Msg != "phase changed" || l.Name != name || l.NS != testNamespace {
				continue
			}
			changes = append(changes, fmt.Sprintf("%s %s -> %s (%s)", l.TS, l.From, l.To, oneLine(l.Why, 160)))
			from, okFrom := phaseOrder[l.From]
			to, okTo := phaseOrder[l.To]
			if okFrom && (!okTo || to < from) {
				back = true
			}
		}
		fmt.Fprintf(GinkgoWriter, "%s: phase changes in the manager's log:\n  %s\n", name, strings.Join(changes, "\n  "))
		Expect(back).To(BeFalse(), "%s went back a phase:\n  %s", name, strings.Join(changes, "\n  "))
	}
}

// installOperator installs the chart with the images under test (and extra --set flags), and
// uninstalls it at the end of the container.
func installOperator(extra ...string) {
	helm := envOr("HELM", "helm")
	out, err := run(helm, helmInstallArgs(extra...)...)
	Expect(err).NotTo(HaveOccurred(), "%s", out)
	_, _ = kubectl("create", "namespace", testNamespace)
	DeferCleanup(func() {
		_, _ = kubectl("delete", "namespace", testNamespace, "--wait=true", "--timeout=300s")
		out, err := run(helm, "uninstall", "beeburst", "--namespace", operatorNamespace, "--wait", "--timeout", "2m")
		Expect(err).NotTo(HaveOccurred(), "%s", out)
	})
}

// helmInstallArgs installs or upgrades the chart in place with the images under test, then
// the extra --set flags (a later --set of the same value wins). The manager logs every visit
// over a second with the requests it waited for (--slow-visit-log, through the chart's
// extraArgs): the tail of its log is in a failed spec's report.
func helmInstallArgs(extra ...string) []string {
	return append([]string{"upgrade", "--install", "beeburst", "charts/beeburst", "--namespace", operatorNamespace,
		"--create-namespace", "--wait", "--timeout", "5m",
		"--set", "image.repository=beeburst/manager", "--set", "image.tag=" + imageTag, "--set", "agentImage=beeburst/agent:" + imageTag, "--set", "image.pullPolicy=IfNotPresent",
		"--set", "extraArgs={--slow-visit-log=1s}"}, extra...)
}

// imageName is the first tag in a docker-archive's manifest.json (or an OCI archive's
// index.json annotation), so the spec names the images that were loaded.
func imageName(tarPath string) string {
	f, err := os.Open(tarPath)
	Expect(err).NotTo(HaveOccurred())
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		Expect(err).NotTo(HaveOccurred(), "%s", tarPath)
		switch strings.TrimPrefix(h.Name, "./") {
		case "manifest.json":
			var m []struct{ RepoTags []string }
			Expect(json.NewDecoder(tr).Decode(&m)).To(Succeed(), "%s", tarPath)
			if len(m) > 0 && len(m[0].RepoTags) > 0 {
				return m[0].RepoTags[0]
			}
		case "index.json":
			var idx struct {
				Manifests []struct {
					Annotations map[string]string `json:"annotations"`
				} `json:"manifests"`
			}
			Expect(json.NewDecoder(tr).Decode(&idx)).To(Succeed(), "%s", tarPath)
			for _, m := range idx.Manifests {
				if n := m.Annotations["io.containerd.image.name"]; n != "" {
					return n
				}
				if n := m.Annotations["org.opencontainers.image.ref.name"]; n != "" {
					return n
				}
			}
		}
	}
	Fail("no image name in " + tarPath)
	return ""
}

// waitReady waits until bb is Ready (failing at once on Failed) and returns its timeline: when
// each condition became True, from creation.
func waitReady(ctx context.Context, bb *v1alpha1.BurstBuffer, start time.Time, limit time.Duration) string {
	phases := []string{}
	last := v1alpha1.Phase("")
	Eventually(func(g Gomega) {
		cur := get(ctx, bb)
		if cur.Status.Phase != last {
			last = cur.Status.Phase
			phases = append(phases, fmt.Sprintf("%s at %.0f s", last, time.Since(start).Seconds()))
		}
		c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionReady)
		g.Expect(c).NotTo(BeNil())
		p := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionProvisioned)
		if cur.Status.Phase == v1alpha1.PhaseFailed {
			StopTrying(fmt.Sprintf("%s failed: %+v", bb.Name, p)).Now()
		}
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue), "%s: %s; provisioned: %+v", bb.Name, c.Message, p)
	}, limit, 2*time.Second).Should(Succeed())
	cur := get(ctx, bb)
	created := cur.CreationTimestamp.Time
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s engine, %s profile): Ready after %.0f s; phases: %s\n", bb.Name, cur.Spec.Engine, cur.Spec.Validation.Profile,
		time.Since(start).Seconds(), strings.Join(phases, ", "))
	for _, t := range []string{v1alpha1.ConditionLimitsEstimated, v1alpha1.ConditionProvisioned, v1alpha1.ConditionComponentsMeasured, v1alpha1.ConditionValidated, v1alpha1.ConditionReady} {
		if c := meta.FindStatusCondition(cur.Status.Conditions, t); c != nil {
			fmt.Fprintf(&b, "  %-20s %-6s %-14s +%3.0f s  %s\n", t, c.Status, c.Reason, c.LastTransitionTime.Sub(created).Seconds(), oneLine(c.Message, 160))
		}
	}
	return b.String()
}

func deleteAndWait(ctx context.Context, bb *v1alpha1.BurstBuffer, limit time.Duration) {
	Expect(client.IgnoreNotFound(k8s.Delete(ctx, bb))).To(Succeed())
	Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(bb), &v1alpha1.BurstBuffer{}))
	}, limit, 2*time.Second).Should(BeTrue())
}

// clientExec runs a shell command in the burst buffer's i-th client pod (the tools image, the
// mount, the auth Secret at beegfs.AuthDir, host network) and returns its output.
func clientExec(bb *v1alpha1.BurstBuffer, i int, script string) string {
	key := taskPodKey(fmt.Sprintf("%s-client-%d", bb.Name, i))
	var out string
	var err error
	for try := 0; try < 3; try++ { // an emulated node's apiserver connection can drop once
		out, err = kubectl("exec", "-n", key.Namespace, key.Name, "--", "sh", "-c", script)
		if err == nil {
			break
		}
		time.Sleep(2 * time.Second)
	}
	Expect(err).NotTo(HaveOccurred(), "%s", out)
	return out
}

// beegfsCLI is the beegfs command line that reaches bb's management service, as the engine's
// tasks run it.
func beegfsCLI(bb *v1alpha1.BurstBuffer) string {
	return fmt.Sprintf("beegfs --mgmtd-addr=%s --auth-file=%s/%s --tls-cert-file=%s/%s",
		bb.Status.BeeGFS.ManagementAddress, beegfs.AuthDir, beegfs.KeyConnAuth, beegfs.AuthDir, beegfs.KeyTLSCert)
}

// hostShell runs a script on node with the host's PID namespace (so /proc/1/mounts is the
// node's mount table), the storage path at /host/nvme and beegfs.MountRoot at /host/run.
func hostShell(ctx context.Context, node, script string) string {
	shells++
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("e2e-host-%s-%d", node, shells), Namespace: testNamespace},
		Spec: corev1.PodSpec{
			NodeName: node, RestartPolicy: corev1.RestartPolicyNever, HostPID: true,
			Containers: []corev1.Container{{Name: "sh", Image: "beeburst/agent:" + imageTag, ImagePullPolicy: corev1.PullIfNotPresent,
				Command:      []string{"sh", "-c", script},
				VolumeMounts: []corev1.VolumeMount{{Name: "nvme", MountPath: "/host/nvme"}, {Name: "run", MountPath: "/host/run"}}}},
			Volumes: []corev1.Volume{
				{Name: "nvme", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/mnt/nvme"}}},
				{Name: "run", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: beegfs.MountRoot}}},
			},
		},
	}
	Expect(k8s.Create(ctx, pod)).To(Succeed())
	DeferCleanup(func() { _ = k8s.Delete(context.Background(), pod) })
	Eventually(func() corev1.PodPhase {
		_ = k8s.Get(ctx, client.ObjectKeyFromObject(pod), pod)
		return pod.Status.Phase
	}, 3*time.Minute, time.Second).Should(BeElementOf(corev1.PodSucceeded, corev1.PodFailed))
	out, err := kubectl("-n", testNamespace, "logs", pod.Name)
	Expect(err).NotTo(HaveOccurred(), "%s", out)
	return out
}

// nodeCap is a node's real disk cap (bytes/s) from hardware.env, 0 when unknown or uncapped.
func nodeCap(node, what string) float64 {
	if hw == nil {
		return 0
	}
	return hwOptional("WORKER_" + strings.TrimPrefix(node, "worker-") + "_DISK_" + what + "_BPS")
}

func mbs(bps float64) string { return fmt.Sprintf("%.1f MB/s", bps/1e6) }

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "..."
	}
	return s
}

// sweepLine is the stage-3 write figure of bb and the stage-2 limit it is held against, or why
// there is none (a measurement above its limit is not published).
func sweepLine(what string, bb *v1alpha1.BurstBuffer) string {
	l := bb.Status.Limits
	if l == nil || l.Sweep == nil || l.Sweep.Write == nil {
		return fmt.Sprintf("  %s: no published write figure (see its warnings)\n", what)
	}
	w := l.Sweep.Write
	return fmt.Sprintf("  %s: write best %s, efficiency %.3f\n", what, mbs(float64(w.BestBytesPerSecond)), float64(w.EfficiencyPerMille)/1000)
}
