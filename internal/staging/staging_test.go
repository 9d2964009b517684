package staging

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

func bb(engine v1alpha1.EngineType) *v1alpha1.BurstBuffer {
	return &v1alpha1.BurstBuffer{
		ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: "ns"},
		Spec: v1alpha1.BurstBufferSpec{
			Engine: engine,
			StageIn: []v1alpha1.StageSpec{
				{Path: "in", PersistentVolumeClaim: v1alpha1.PVCSource{ClaimName: "data", Path: "a"}},
				{Path: "ref", PersistentVolumeClaim: v1alpha1.PVCSource{ClaimName: "refs", Path: "."}},
				{Path: "in2", PersistentVolumeClaim: v1alpha1.PVCSource{ClaimName: "data", Path: "b"}},
			},
			StageOut: []v1alpha1.StageSpec{{Path: "results", PersistentVolumeClaim: v1alpha1.PVCSource{ClaimName: "out", Path: "run"}}},
		},
		Status: v1alpha1.BurstBufferStatus{
			Nodes: []v1alpha1.NodeStatus{{Name: "n1"}, {Name: "n2"}, {Name: "n3"}},
			Mount: &v1alpha1.MountStatus{Path: "/mnt/beeburst", HostPath: "/run/beeburst/ns.job"},
		},
	}
}

func TestPodArgsVolumesAndShards(t *testing.T) {
	b := bb(v1alpha1.EngineBeeGFS)
	p := Pod(b, In, 2, "n3", "agent:1")
	args := strings.Join(p.Spec.Containers[0].Args, " ")
	for _, want := range []string{
		"--from /claims/claim-0/a --to /burst-buffer/in",
		"--from /claims/claim-1 --to /burst-buffer/ref",
		"--from /claims/claim-0/b --to /burst-buffer/in2",
		"--shard 2 --of 3", // beegfs: one shared file system, copied once in shards
	} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	// Two claims read-only, then the burst buffer through its staging claim: no host path,
	// so the copy runs under Pod Security "baseline", beside the user's claims.
	if len(p.Spec.Volumes) != 3 || p.Spec.Volumes[2].PersistentVolumeClaim == nil || p.Spec.Volumes[2].PersistentVolumeClaim.ClaimName != "job-staging" {
		t.Errorf("volumes = %+v, want two claims and the staging claim", p.Spec.Volumes)
	}
	for _, v := range p.Spec.Volumes {
		if v.HostPath != nil {
			t.Errorf("volume %s is a host path", v.Name)
		}
	}
	if m := p.Spec.Containers[0].VolumeMounts[2]; m.MountPath != BurstBufferMount || m.ReadOnly {
		t.Errorf("the burst buffer mount: %+v", m)
	}
	if !p.Spec.Volumes[0].PersistentVolumeClaim.ReadOnly || !p.Spec.Containers[0].VolumeMounts[0].ReadOnly {
		t.Error("stage-in mounts its claims read-only")
	}
	if p.Namespace != b.Namespace || len(p.OwnerReferences) != 1 {
		t.Errorf("a copy runs beside its burst buffer, owned by it: %s, %v", p.Namespace, p.OwnerReferences)
	}
	if p.Name != PodName(b, In, 2) || !strings.HasPrefix(p.Name, "job-stagein-") {
		t.Errorf("name %q", p.Name)
	}

	out := Pod(bb(v1alpha1.EngineLocal), Out, 0, "n1", "agent:1")
	args = strings.Join(out.Spec.Containers[0].Args, " ")
	if !strings.Contains(args, "--from /burst-buffer/results --to /claims/claim-0/run --missing-ok") || strings.Contains(args, "--shard") {
		t.Errorf("local stage-out args %q: every node copies its own results, missing ones are fine", args)
	}
	if strings.Contains(args, "--beegfs") {
		t.Errorf("local stage-out args %q: node-local scratch is no BeeGFS mount", args)
	}
	// One shared file system: the copy checks it is BeeGFS, not the empty mount point of a
	// client that is gone (a copy of "nothing" would let the teardown remove the targets).
	args = strings.Join(Pod(bb(v1alpha1.EngineBeeGFS), Out, 1, "n2", "agent:1").Spec.Containers[0].Args, " ")
	if !strings.Contains(args, "--beegfs /burst-buffer") {
		t.Errorf("beegfs stage-out args %q: the mount is not checked", args)
	}
	if out.Spec.Volumes[1].PersistentVolumeClaim.ReadOnly {
		t.Error("stage-out writes its claim")
	}
}

// A changed spec gets new pod names; the same spec the same names.
func TestKeyFollowsTheSpec(t *testing.T) {
	a, b2 := bb(v1alpha1.EngineLocal), bb(v1alpha1.EngineLocal)
	if PodName(a, Out, 0) != PodName(b2, Out, 0) {
		t.Error("same spec, different names")
	}
	b2.Spec.StageOut[0].PersistentVolumeClaim.ClaimName = "corrected"
	if PodName(a, Out, 0) == PodName(b2, Out, 0) {
		t.Error("a corrected spec must get fresh pods")
	}
}

func TestParallel(t *testing.T) {
	claim := func(spec, bound []corev1.PersistentVolumeAccessMode) corev1.PersistentVolumeClaim {
		return corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{AccessModes: spec}, Status: corev1.PersistentVolumeClaimStatus{AccessModes: bound}}
	}
	rwx, rox, rwo := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}, []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany}, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	for _, c := range []struct {
		d      Direction
		claims []corev1.PersistentVolumeClaim
		want   bool
	}{
		{In, []corev1.PersistentVolumeClaim{claim(rwx, nil)}, true},
		{In, []corev1.PersistentVolumeClaim{claim(rox, nil)}, true},
		{Out, []corev1.PersistentVolumeClaim{claim(rox, nil)}, false},
		{In, []corev1.PersistentVolumeClaim{claim(rwx, nil), claim(rwo, nil)}, false},
		{Out, []corev1.PersistentVolumeClaim{claim(rwo, rwx)}, true}, // bound: what the volume offers counts
	} {
		if got := Parallel(c.d, c.claims); got != c.want {
			t.Errorf("Parallel(%s, %+v) = %v, want %v", c.d, c.claims, got, c.want)
		}
	}
}

func donePod(name string, phase corev1.PodPhase, msg string, at time.Time) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(at.Add(-10 * time.Second))},
		Status: corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{{
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: msg, FinishedAt: metav1.NewTime(at)}},
		}}},
	}
}

func rep(files, bytes int64, seconds float64) string {
	return fmt.Sprintf(`{"command":"stage","phase":"succeeded","stage":{"files":%d,"bytes":%d,"seconds":%g}}`, files, bytes, seconds)
}

func TestSummarise(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	pending := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p2", CreationTimestamp: metav1.NewTime(now)},
		Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Message: "0/3 nodes are available: 1 node(s) had volume node affinity conflict",
		}}}}
	running := []NodePod{
		{Node: "n1", Pod: donePod("p1", corev1.PodSucceeded, rep(4, 4_000_000, 2), now)},
		{Node: "n2", Pod: pending},
		{Node: "n3"},
	}
	st := Summarise(running, false, now)
	if st.Phase != v1alpha1.StageRunning || st.Files != 4 || st.Nodes[1].Phase != v1alpha1.StagePending ||
		!strings.Contains(st.Nodes[1].Message, "volume node affinity conflict") || !strings.Contains(st.Nodes[2].Message, "one node at a time") {
		t.Errorf("running: %+v", st)
	}
	msg := Message(In, st)
	if !strings.Contains(msg, "stage-in running: 4 file(s), 4.0 MB") || !strings.Contains(msg, "n2: not scheduled") {
		t.Errorf("message %q", msg)
	}

	done := []NodePod{
		{Node: "n1", Pod: donePod("p1", corev1.PodSucceeded, rep(4, 4_000_000, 2), now)},
		{Node: "n2", Pod: donePod("p2", corev1.PodSucceeded, rep(6, 6_000_000, 4), now.Add(time.Second))},
	}
	st = Summarise(done, true, now.Add(time.Hour))
	if st.Phase != v1alpha1.StageSucceeded || st.Files != 10 || st.Bytes != 10_000_000 || !st.CompletionTime.Time.Equal(now.Add(time.Second)) {
		t.Errorf("done: %+v", st)
	}
	if st.BytesPerSecond != 2_500_000 {
		t.Errorf("rate %d, want 10 MB over the slowest node's 4 s (nodes copied at once)", st.BytesPerSecond)
	}
	if st = Summarise(done, false, now); st.BytesPerSecond != 10_000_000/6 {
		t.Errorf("rate %d, want 10 MB over 2+4 s (nodes took turns)", st.BytesPerSecond)
	}

	failedPods := []NodePod{
		{Node: "n1", Pod: donePod("p1", corev1.PodFailed, `{"command":"stage","phase":"failed","message":"x already exists with different content","stage":{"files":1,"bytes":5}}`, now)},
		{Node: "n2", Pod: donePod("p2", corev1.PodFailed, "OOMKilled", now)},
		{Node: "n3", Pod: donePod("p3", corev1.PodSucceeded, "not json", now)},
	}
	st = Summarise(failedPods, true, now)
	if st.Phase != v1alpha1.StageFailed || st.Files != 1 {
		t.Errorf("failed: %+v", st)
	}
	for i, want := range []string{"already exists with different content", "OOMKilled", "no copy report: not json"} {
		if st.Nodes[i].Phase != v1alpha1.StageFailed || !strings.Contains(st.Nodes[i].Message, want) {
			t.Errorf("node %d: %+v, want failed with %q", i, st.Nodes[i], want)
		}
	}
}

// A running copy's figures come from the last progress line of its log.
func TestProgressOfARunningCopy(t *testing.T) {
	log := "agent: stage: starting\n" +
		`agent: progress {"files":10,"bytes":1000,"seconds":5}` + "\n" +
		`agent: progress {"files":25,"bytes":2500000000,"seconds":10}` + "\n" +
		"agent: progress {garbled\n"
	p := LastProgress(log)
	if p == nil || p.Files != 25 || p.Bytes != 2_500_000_000 {
		t.Fatalf("LastProgress = %+v, want the last readable line", p)
	}
	if LastProgress("no progress yet\n") != nil {
		t.Error("progress from a log without progress lines")
	}
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	running := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p1", CreationTimestamp: metav1.NewTime(now.Add(-10 * time.Second))},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
		}}}}
	st := Summarise([]NodePod{{Node: "n1", Pod: running, Progress: p}}, true, now)
	if st.Phase != v1alpha1.StageRunning || st.Files != 25 || st.Bytes != 2_500_000_000 || st.BytesPerSecond != 250_000_000 {
		t.Errorf("running copy: %+v, want 25 files, 2.5 GB at 250 MB/s so far", st)
	}
}

func TestReadable(t *testing.T) {
	b := bb(v1alpha1.EngineLocal)
	got := Readable(b, In, "open /claims/claim-1/x: denied; /claims/claim-0 is empty; /burst-buffer/in/a exists")
	want := "open claim refs: x: denied; claim data: . is empty; burst buffer: in/a exists"
	if got != want {
		t.Errorf("Readable = %q, want %q", got, want)
	}
}

// Object store copies: no claim volume, the URL with its store's endpoint, region and the
// prefix of its credential variables as the argument, the credentials from the Secret
// (envFrom with that prefix), one Secret per distinct name, next to claim copies.
func TestPodS3(t *testing.T) {
	b := bb(v1alpha1.EngineLocal)
	b.Spec.StageIn = []v1alpha1.StageSpec{
		{Path: "in", S3: &v1alpha1.S3Source{URL: "s3://data/run-7", Endpoint: "http://minio.store:9000", Region: "eu-1", CredentialsSecret: "store-keys"}},
		{Path: "ref", S3: &v1alpha1.S3Source{URL: "s3://refs"}}, // the pod's own role
		{Path: "in2", S3: &v1alpha1.S3Source{URL: "s3://data/run-8", CredentialsSecret: "store-keys"}},
		{Path: "other", S3: &v1alpha1.S3Source{URL: "s3://other/x", CredentialsSecret: "other-keys"}},
	}
	b.Spec.StageOut = []v1alpha1.StageSpec{
		{Path: "results", S3: &v1alpha1.S3Source{URL: "s3://data/out", CredentialsSecret: "store-keys"}},
		{Path: "logs", PersistentVolumeClaim: v1alpha1.PVCSource{ClaimName: "logs"}},
	}
	if got := Claims(b.Spec.StageIn); len(got) != 0 {
		t.Errorf("claims of s3 copies: %v", got)
	}
	if got := Secrets(b.Spec.StageIn); strings.Join(got, ",") != "store-keys,other-keys" {
		t.Errorf("secrets %v", got)
	}
	p := Pod(b, In, 0, "n1", "agent:1")
	c := p.Spec.Containers[0]
	args := strings.Join(c.Args, " ")
	for _, want := range []string{
		"--from s3://data/run-7?endpoint=http%3A%2F%2Fminio.store%3A9000&env-prefix=S3_0_&region=eu-1 --to /burst-buffer/in",
		"--from s3://refs --to /burst-buffer/ref",
		"--from s3://data/run-8?env-prefix=S3_0_ --to /burst-buffer/in2",
		"--from s3://other/x?env-prefix=S3_1_ --to /burst-buffer/other",
	} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	if len(p.Spec.Volumes) != 1 || len(c.VolumeMounts) != 1 {
		t.Errorf("volumes %+v: want only the burst buffer's", p.Spec.Volumes)
	}
	if len(c.EnvFrom) != 2 || c.EnvFrom[0].Prefix != "S3_0_" || c.EnvFrom[0].SecretRef.Name != "store-keys" ||
		c.EnvFrom[1].Prefix != "S3_1_" || c.EnvFrom[1].SecretRef.Name != "other-keys" {
		t.Errorf("envFrom %+v", c.EnvFrom)
	}
	if !Parallel(In, nil) {
		t.Error("object stores never hold a copy back")
	}

	out := Pod(b, Out, 1, "n2", "agent:1")
	args = strings.Join(out.Spec.Containers[0].Args, " ")
	for _, want := range []string{"--from /burst-buffer/results --to s3://data/out?env-prefix=S3_0_", "--from /burst-buffer/logs --to /claims/claim-0", "--missing-ok"} {
		if !strings.Contains(args, want) {
			t.Errorf("stage-out args %q lack %q", args, want)
		}
	}
	if len(out.Spec.Volumes) != 2 || out.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != "logs" || out.Spec.Volumes[1].PersistentVolumeClaim.ClaimName != "job-staging" {
		t.Errorf("stage-out volumes %+v", out.Spec.Volumes)
	}
}
