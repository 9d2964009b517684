package e2e

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// stagingS3 stages in from and out to an object store. The store is gofakes3 (an S3-protocol
// server) in this test process, listening in worker-1's network namespace at its node
// address, which every pod reaches like an object store on the network: the agent's real S3
// client, in real pods, with the credentials from a real Secret.
func stagingS3() {
	It("stages in from an object store and stages every byte of the results out to it", func() {
		if hw == nil {
			Skip("serves the object store on the testbed's host bridge")
		}
		ctx := context.Background()
		ln, err := listenInNode("worker-1", hw["WORKER_1_IP"])
		Expect(err).NotTo(HaveOccurred())
		be := s3mem.New()
		srv := &http.Server{Handler: gofakes3.New(be).Server(), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		DeferCleanup(func() { _ = srv.Close() })
		endpoint := "http://" + ln.Addr().String()
		Expect(be.CreateBucket("e2e")).To(Succeed())

		input := make([]byte, 3<<20)
		_, _ = rand.Read(input)
		sum := sha256.Sum256(input)
		want := hex.EncodeToString(sum[:])
		meta := map[string]string{"Last-Modified": time.Now().UTC().Format(http.TimeFormat)}
		_, err = be.PutObject("e2e", "run-1/in/data.bin", meta, strings.NewReader(string(input)), int64(len(input)), nil)
		Expect(err).NotTo(HaveOccurred())

		Expect(k8s.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "s3-keys", Namespace: testNamespace},
			StringData: map[string]string{"AWS_ACCESS_KEY_ID": "e2e", "AWS_SECRET_ACCESS_KEY": "e2e-secret"},
		})).To(Succeed())
		s3 := func(prefix string) *v1alpha1.S3Source {
			return &v1alpha1.S3Source{URL: "s3://e2e/" + prefix, Endpoint: endpoint, Region: "us-east-1", CredentialsSecret: "s3-keys"}
		}
		bb := &v1alpha1.BurstBuffer{
			ObjectMeta: metav1.ObjectMeta{Name: "objects", Namespace: testNamespace},
			Spec: v1alpha1.BurstBufferSpec{
				Engine:     v1alpha1.EngineLocal,
				Nodes:      v1alpha1.NodesSpec{Count: int32(workerCount())},
				Validation: v1alpha1.ValidationSpec{Profile: v1alpha1.ProfileNone},
				StageIn:    []v1alpha1.StageSpec{{Path: "input", S3: s3("run-1/in")}},
				StageOut:   []v1alpha1.StageSpec{{Path: "results", S3: s3("run-1/out")}},
			},
		}
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		dir := "/mnt/nvme/beeburst/" + testNamespace + ".objects"
		Expect(k8s.Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "reader", Namespace: testNamespace, Labels: map[string]string{v1alpha1.LabelBurstBuffer: "objects"}},
			Spec: corev1.PodSpec{
				RestartPolicy:   corev1.RestartPolicyNever,
				SchedulingGates: []corev1.PodSchedulingGate{{Name: v1alpha1.SchedulingGate}},
				Containers: []corev1.Container{{Name: "main", Image: "beeburst/agent:" + imageTag, ImagePullPolicy: corev1.PullIfNotPresent,
					Command: []string{"sh", "-ec", "mkdir -p /scratch/results && sha256sum /scratch/input/data.bin > /scratch/results/input.sha256 && " +
						"cat /scratch/input/data.bin > /scratch/results/copy.bin"},
					VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}}},
				Volumes: []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dir}}}},
			},
		})).To(Succeed())

		var in, out *v1alpha1.StageStatus
		Eventually(func() bool {
			cur := &v1alpha1.BurstBuffer{}
			err := k8s.Get(ctx, client.ObjectKeyFromObject(bb), cur)
			if err == nil {
				in, out = cur.Status.StageIn.DeepCopy(), cur.Status.StageOut.DeepCopy()
				Expect(cur.Status.Phase).NotTo(BeElementOf(v1alpha1.PhaseFailed, v1alpha1.PhaseStageOutFailed), "%+v", cur.Status.Conditions)
			}
			return apierrors.IsNotFound(err)
		}, 3*time.Minute, 500*time.Millisecond).Should(BeTrue())
		Expect(in).NotTo(BeNil())
		Expect(in.Files).To(Equal(int64(workerCount())), "the object on every node")
		Expect(out).NotTo(BeNil())
		Expect(out.Phase).To(Equal(v1alpha1.StageSucceeded))
		fmt.Printf("object store: stage-in %d files, %d bytes at %d B/s; stage-out %d files, %d bytes at %d B/s\n",
			in.Files, in.Bytes, in.BytesPerSecond, out.Files, out.Bytes, out.BytesPerSecond)

		read := func(key string) []byte {
			o, err := be.GetObject("e2e", key, nil)
			Expect(err).NotTo(HaveOccurred(), "%s", key)
			defer o.Contents.Close()
			b, err := io.ReadAll(o.Contents)
			Expect(err).NotTo(HaveOccurred())
			return b
		}
		copied := sha256.Sum256(read("run-1/out/copy.bin"))
		Expect(hex.EncodeToString(copied[:])).To(Equal(want), "every byte the job wrote is in the store")
		Expect(strings.Fields(string(read("run-1/out/input.sha256")))[0]).To(Equal(want), "the job read the staged-in object intact")
	})
}

// listenInNode opens a TCP listener in a testbed node's network namespace (the testbed's
// `ip netns` beeburst-<node>), at the node's address. The host itself cannot serve pods: it
// has no route back to the pod networks (the testbed forwards and routes nothing for them),
// whereas every pod reaches every node address. A socket stays in the namespace it was made
// in, so only its creation needs the switch (root, as the testbed).
func listenInNode(node, ip string) (net.Listener, error) {
	type result struct {
		ln  net.Listener
		err error
	}
	ch := make(chan result, 1)
	go func() {
		// This goroutine's thread changes namespace and is never given back to the runtime
		// (no UnlockOSThread): the runtime ends it when the goroutine returns.
		runtime.LockOSThread()
		target, err := os.Open("/run/netns/beeburst-" + node)
		if err != nil {
			ch <- result{err: err}
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- result{err: fmt.Errorf("setns %s: %w", node, err)}
			return
		}
		ln, err := net.Listen("tcp", ip+":0")
		ch <- result{ln, err}
	}()
	r := <-ch
	return r.ln, r.err
}
