package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// stagingSample is the README's walkthrough "Stage in, run, stage out", run exactly from
// config/samples/staging, as a spec of the ordered suite (the operator is installed). Two
// substitutions only: the testbed has no registry, so busybox becomes the agent image (which
// carries the same shell tools), and the Job's hostPath names this suite's namespace.
func stagingSample() {
	const sampleDir = "config/samples/staging"
	It("stages the input in, runs the job, stages every byte of its results out to the claim, and leaves nothing on the nodes", func() {
		if hw == nil {
			Skip("the sample's volumes are hostPath volumes that the testbed's nodes share; on other clusters they need a ReadWriteMany storage class")
		}
		ctx := context.Background()
		_ = os.RemoveAll("/var/tmp/beeburst-samples") // a run killed before its cleanup
		DeferCleanup(func() {
			_, _ = kubectl("delete", "-n", testNamespace, "job", "--all", "--wait=true", "--timeout=60s")
			_, _ = kubectl("delete", "-n", testNamespace, "-f", filepath.Join(sampleDir, "claims.yaml"), "--wait=true", "--timeout=60s")
			_, _ = kubectl("delete", "-f", filepath.Join(sampleDir, "volumes-testbed.yaml"), "--wait=true", "--timeout=60s")
			// The volumes' reclaim policy is Retain (a sample must not make data vanish): the
			// suite removes what it wrote itself.
			_ = os.RemoveAll("/var/tmp/beeburst-samples")
		})
		apply := func(file string) {
			b, err := os.ReadFile(filepath.Join(repo, sampleDir, file))
			Expect(err).NotTo(HaveOccurred())
			y := strings.ReplaceAll(string(b), "busybox:1.36", "beeburst/agent:"+imageTag)
			y = strings.ReplaceAll(y, "/default.staged", "/"+testNamespace+".staged")
			cmd := exec.Command("kubectl", "apply", "-n", testNamespace, "-f", "-")
			cmd.Stdin = strings.NewReader(y)
			out, err := cmd.CombinedOutput()
			fmt.Fprintf(GinkgoWriter, "$ kubectl apply -f %s\n%s", file, out)
			Expect(err).NotTo(HaveOccurred(), "%s", string(out))
		}
		apply("volumes-testbed.yaml")
		apply("claims.yaml")
		apply("seed-input.yaml")
		waitJob(ctx, "seed-input", 2*time.Minute)

		bb := &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Name: "staged", Namespace: testNamespace}}
		start := time.Now()
		apply("burstbuffer.yaml")
		apply("job.yaml")

		// Ready means measured and staged in; the job's pods are released only then.
		Eventually(func(g Gomega) {
			cur := get(ctx, bb)
			c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionReady)
			g.Expect(c).NotTo(BeNil())
			g.Expect(cur.Status.Phase).NotTo(BeElementOf(v1alpha1.PhaseFailed, v1alpha1.PhaseDegraded), "%s", c.Message)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue), "%s", c.Message)
		}, 5*time.Minute, time.Second).Should(Succeed())
		in := get(ctx, bb).Status.StageIn
		Expect(in).NotTo(BeNil())
		Expect(in.Phase).To(Equal(v1alpha1.StageSucceeded))
		Expect(in.Files).To(Equal(int64(2*5)), "4 parts + SHA256SUMS to each of 2 nodes")
		Expect(in.Bytes).To(Equal(int64(2*(32<<20)) + 2*sumsSize(4)))
		report := fmt.Sprintf("staging sample: Ready (quick profile + stage-in) after %.1f s; stage-in %d files, %d bytes at %d B/s\n",
			time.Since(start).Seconds(), in.Files, in.Bytes, in.BytesPerSecond)

		// The job finishes; AfterWorkload tears the burst buffer down, stage-out first.
		var out *v1alpha1.StageStatus
		Eventually(func() bool {
			cur := &v1alpha1.BurstBuffer{}
			err := k8s.Get(ctx, client.ObjectKeyFromObject(bb), cur)
			if err == nil && cur.Status.StageOut != nil {
				out = cur.Status.StageOut.DeepCopy()
			}
			Expect(cur.Status.Phase).NotTo(Equal(v1alpha1.PhaseStageOutFailed), "%+v", cur.Status.StageOut)
			return apierrors.IsNotFound(err)
		}, 5*time.Minute, 500*time.Millisecond).Should(BeTrue())
		waitJob(ctx, "staged-job", 10*time.Second)
		Expect(out).NotTo(BeNil(), "the status showed the stage-out")
		report += fmt.Sprintf("stage-out: %s, %d files, %d bytes at %d B/s; apply to gone: %.1f s\n",
			out.Phase, out.Files, out.Bytes, out.BytesPerSecond, time.Since(start).Seconds())
		AddReportEntry("staging sample", report)
		fmt.Print(report)

		// Every byte on the claim: each pod's checksums of what it wrote, and its checksum of
		// the input it read, against the input on the other claim.
		log := podShell(ctx, "e2e-verify", "", `set -e
cd /results/run-1
for d in */; do
  (cd "$d" && sha256sum -c SHA256SUMS >&2)
  echo "result $d $(cat "$d/input.sha256")"
done
echo "input $(cat /input/run-1/part-*.bin | sha256sum)"`,
			claimVolume("results", "/results"), claimVolume("input", "/input"))
		var results []string
		var input string
		for _, l := range strings.Split(strings.TrimSpace(log), "\n") {
			f := strings.Fields(l)
			switch {
			case len(f) >= 3 && f[0] == "result":
				results = append(results, f[1])
			case len(f) >= 2 && f[0] == "input":
				input = f[1]
			}
		}
		Expect(results).To(HaveLen(2), "one results directory per job pod:\n%s", log)
		for _, l := range strings.Split(log, "\n") {
			if f := strings.Fields(l); len(f) >= 3 && f[0] == "result" {
				Expect(f[2]).To(Equal(input), "the input the job read is the input on the claim")
			}
		}
		Expect(out.Files).To(Equal(int64(2 * 3)))
		Expect(out.Bytes).To(BeNumerically(">", 2*(16<<20)))

		for _, node := range workers() {
			ls := nodeShell(ctx, node, "ls -A /host/beeburst 2>/dev/null; true")
			Expect(ls).NotTo(ContainSubstring(testNamespace+".staged"), "left on %s", node)
		}
	})
}

// sumsSize is the size of a SHA256SUMS file of n entries "part-I.bin".
func sumsSize(n int) int64 { return int64(n * (64 + 2 + len("part-1.bin") + 1)) }

func waitJob(ctx context.Context, name string, timeout time.Duration) {
	Eventually(func(g Gomega) {
		var job batchv1.Job
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: testNamespace, Name: name}, &job)).To(Succeed())
		for _, c := range job.Status.Conditions {
			g.Expect(c.Type).NotTo(Equal(batchv1.JobFailed), "%s", c.Message)
		}
		g.Expect(job.Status.Succeeded).To(Equal(*job.Spec.Completions))
	}, timeout, time.Second).Should(Succeed())
}

// shells counts podShell's pods.
var shells int

type volume struct {
	v corev1.Volume
	m corev1.VolumeMount
}

func claimVolume(claim, at string) volume {
	return volume{
		v: corev1.Volume{Name: claim, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}},
		m: corev1.VolumeMount{Name: claim, MountPath: at},
	}
}

// podShell runs a shell script in a pod (on node, if given) with the agent image and the
// volumes, and returns its log (stdout and stderr).
func podShell(ctx context.Context, name, node, script string, vols ...volume) string {
	shells++
	name = fmt.Sprintf("%s-%d", name, shells) // unique: earlier ones are deleted at the spec's end
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNamespace},
		Spec: corev1.PodSpec{
			NodeName: node, RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "sh", Image: "beeburst/agent:" + imageTag, ImagePullPolicy: corev1.PullIfNotPresent,
				Command: []string{"sh", "-c", script}}},
		},
	}
	for _, v := range vols {
		pod.Spec.Volumes = append(pod.Spec.Volumes, v.v)
		pod.Spec.Containers[0].VolumeMounts = append(pod.Spec.Containers[0].VolumeMounts, v.m)
	}
	Expect(k8s.Create(ctx, pod)).To(Succeed())
	DeferCleanup(func() { _ = k8s.Delete(context.Background(), pod) })
	Eventually(func() corev1.PodPhase {
		_ = k8s.Get(ctx, client.ObjectKeyFromObject(pod), pod)
		Expect(pod.Status.Phase).NotTo(Equal(corev1.PodFailed), func() string { out, _ := kubectl("-n", testNamespace, "logs", name); return out })
		return pod.Status.Phase
	}, time.Minute, time.Second).Should(Equal(corev1.PodSucceeded))
	out, err := kubectl("-n", testNamespace, "logs", name)
	Expect(err).NotTo(HaveOccurred(), "%s", out)
	return out
}

// stageOutFailureKeepsData proves the safety promise on real nodes: a stage-out that cannot
// finish (a file on the claim with other content) leaves the data on the node and the
// BurstBuffer in StageOutFailed; only hurry removes it.
func stageOutFailureKeepsData() {
	It("keeps the data on the node when stage-out fails, and removes it only when the user sets hurry", func() {
		if hw == nil {
			Skip("needs the testbed's shared hostPath volumes (see the staging sample)")
		}
		ctx := context.Background()
		const sampleDir = "config/samples/staging"
		_ = os.RemoveAll("/var/tmp/beeburst-samples")
		DeferCleanup(func() {
			_, _ = kubectl("delete", "-n", testNamespace, "-f", filepath.Join(sampleDir, "claims.yaml"), "--wait=true", "--timeout=60s")
			_, _ = kubectl("delete", "-f", filepath.Join(sampleDir, "volumes-testbed.yaml"), "--wait=true", "--timeout=60s")
			_ = os.RemoveAll("/var/tmp/beeburst-samples")
		})
		for _, f := range []string{"volumes-testbed.yaml", "claims.yaml"} {
			out, err := kubectl("apply", "-n", testNamespace, "-f", filepath.Join(sampleDir, f))
			Expect(err).NotTo(HaveOccurred(), "%s", out)
		}
		// The claim already holds conflict/data.txt with other content.
		podShell(ctx, "e2e-seed-conflict", "", "mkdir -p /results/conflict && echo old > /results/conflict/data.txt",
			claimVolume("results", "/results"))

		bb := &v1alpha1.BurstBuffer{
			ObjectMeta: metav1.ObjectMeta{Name: "keep", Namespace: testNamespace},
			Spec: v1alpha1.BurstBufferSpec{
				Engine:     v1alpha1.EngineLocal,
				Nodes:      v1alpha1.NodesSpec{Count: 1},
				Validation: v1alpha1.ValidationSpec{Profile: v1alpha1.ProfileNone},
				StageOut:   []v1alpha1.StageSpec{{Path: "results", PersistentVolumeClaim: v1alpha1.PVCSource{ClaimName: "results", Path: "conflict"}}},
			},
		}
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		dir := "/mnt/nvme/beeburst/" + testNamespace + ".keep"
		writer := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "writer", Namespace: testNamespace, Labels: map[string]string{v1alpha1.LabelBurstBuffer: "keep"}},
			Spec: corev1.PodSpec{
				RestartPolicy:   corev1.RestartPolicyNever,
				SchedulingGates: []corev1.PodSchedulingGate{{Name: v1alpha1.SchedulingGate}},
				Containers: []corev1.Container{{Name: "main", Image: "beeburst/agent:" + imageTag, ImagePullPolicy: corev1.PullIfNotPresent,
					Command:      []string{"sh", "-c", "mkdir -p /scratch/results && echo new > /scratch/results/data.txt"},
					VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}}},
				Volumes: []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dir}}}},
			},
		}
		Expect(k8s.Create(ctx, writer)).To(Succeed())

		// The writer runs once the burst buffer is Ready and ends; AfterWorkload deletes the
		// burst buffer, whose stage-out meets the conflict.
		Eventually(func(g Gomega) {
			cur := get(ctx, bb)
			g.Expect(cur.Status.Phase).To(Equal(v1alpha1.PhaseStageOutFailed))
		}, 3*time.Minute, time.Second).Should(Succeed())
		cur := get(ctx, bb)
		c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionStagedOut)
		Expect(c.Message).To(And(ContainSubstring("already exists with different content"), ContainSubstring("spec.teardown.hurry")))
		fmt.Printf("stage-out failure kept the burst buffer: %s\n", c.Message)
		node := cur.Status.Nodes[0].Name
		Consistently(func() string {
			return nodeShell(ctx, node, "cat /host/beeburst/"+testNamespace+".keep/results/data.txt")
		}, 10*time.Second, 5*time.Second).Should(Equal("new\n"), "the data stays on the node")
		Expect(podShell(ctx, "e2e-read-conflict", "", "cat /results/conflict/data.txt", claimVolume("results", "/results"))).
			To(Equal("old\n"), "nothing on the claim is overwritten")

		// The human gives the data up.
		Eventually(func() error {
			cur := get(ctx, bb)
			cur.Spec.Teardown.Hurry = true
			return k8s.Update(ctx, cur)
		}, time.Minute, time.Second).Should(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(bb), &v1alpha1.BurstBuffer{}))
		}, 2*time.Minute, time.Second).Should(BeTrue())
		Expect(nodeShell(ctx, node, "ls -A /host/beeburst 2>/dev/null; true")).NotTo(ContainSubstring(testNamespace + ".keep"))
	})
}
