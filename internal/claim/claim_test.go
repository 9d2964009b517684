package claim

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

func bbOf(engine v1alpha1.EngineType, claimName string, perNode string) *v1alpha1.BurstBuffer {
	bb := &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Name: "scratch", Namespace: "team", UID: "u-1"}}
	bb.Spec.Engine = engine
	bb.Spec.Workload.ClaimName = claimName
	if perNode != "" {
		q := resource.MustParse(perNode)
		bb.Spec.Storage.CapacityPerNode = &q
	}
	return bb
}

func node(name, host string) corev1.Node {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	if host != "" {
		n.Labels[corev1.LabelHostname] = host
	}
	return n
}

func TestClaimPerEngine(t *testing.T) {
	for _, tc := range []struct {
		name      string
		bb        *v1alpha1.BurstBuffer
		p         Purpose
		wantName  string
		wantMode  corev1.PersistentVolumeAccessMode
		wantReq   string
		wantVol   string
		component string
	}{
		{"local, default name", bbOf(v1alpha1.EngineLocal, "", ""), Workload, "scratch", corev1.ReadWriteOnce, "1Mi", "beeburst-u-1", "claim"},
		{"local, per node capacity", bbOf(v1alpha1.EngineLocal, "data", "10Gi"), Workload, "data", corev1.ReadWriteOnce, "10Gi", "beeburst-u-1", "claim"},
		{"beegfs, the whole capacity", bbOf(v1alpha1.EngineBeeGFS, "", "10Gi"), Workload, "scratch", corev1.ReadWriteMany, "30Gi", "beeburst-u-1", "claim"},
		{"staging", bbOf(v1alpha1.EngineLocal, "data", ""), Staging, "data-staging", corev1.ReadWriteOnce, "1Mi", "beeburst-u-1-staging", "staging-claim"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Claim(tc.bb, tc.p, "beeburst", 3)
			if c.Name != tc.wantName || c.Namespace != "team" {
				t.Errorf("claim %s/%s, want team/%s", c.Namespace, c.Name, tc.wantName)
			}
			if len(c.Spec.AccessModes) != 1 || c.Spec.AccessModes[0] != tc.wantMode {
				t.Errorf("access modes %v, want %s", c.Spec.AccessModes, tc.wantMode)
			}
			if got := c.Spec.Resources.Requests[corev1.ResourceStorage]; got.Cmp(resource.MustParse(tc.wantReq)) != 0 {
				t.Errorf("request %s, want %s", got.String(), tc.wantReq)
			}
			if c.Spec.VolumeName != tc.wantVol || *c.Spec.StorageClassName != "beeburst" {
				t.Errorf("volume %q class %q", c.Spec.VolumeName, *c.Spec.StorageClassName)
			}
			if c.Labels["app.kubernetes.io/component"] != tc.component || c.Labels["beeburst.io/burst-buffer-namespace"] != "team" {
				t.Errorf("labels %v", c.Labels)
			}
			if !Ours(tc.bb, c) {
				t.Error("the burst buffer's own claim is not Ours")
			}
		})
	}
}

func TestVolume(t *testing.T) {
	bb := bbOf(v1alpha1.EngineLocal, "", "")
	c := Claim(bb, Workload, "beeburst", 2)
	c.UID = "c-1"
	pv, err := Volume(bb, c, "/mnt/nvme/beeburst/team.scratch", []corev1.Node{node("b", "host-b"), node("a", "host-a")}, resource.MustParse("5Gi"))
	if err != nil {
		t.Fatal(err)
	}
	if pv.Name != "beeburst-u-1" || pv.Spec.Local == nil || pv.Spec.Local.Path != "/mnt/nvme/beeburst/team.scratch" {
		t.Fatalf("volume %s %+v", pv.Name, pv.Spec.PersistentVolumeSource)
	}
	if r := pv.Spec.ClaimRef; r == nil || r.Namespace != "team" || r.Name != "scratch" || r.UID != "c-1" {
		t.Errorf("claimRef %+v", r)
	}
	vals := pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Values
	if strings.Join(vals, ",") != "host-a,host-b" {
		t.Errorf("node affinity %v, want the hostnames, sorted", vals)
	}
	if q := pv.Spec.Capacity[corev1.ResourceStorage]; q.Cmp(resource.MustParse("5Gi")) != 0 {
		t.Errorf("capacity %s", q.String())
	}
	if pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain {
		t.Errorf("reclaim policy %s: the operator deletes the volume, the data goes with teardown", pv.Spec.PersistentVolumeReclaimPolicy)
	}
	pv, _ = Volume(bb, c, "/x", []corev1.Node{node("a", "host-a")}, resource.Quantity{})
	if q := pv.Spec.Capacity[corev1.ResourceStorage]; q.Cmp(resource.MustParse("1Mi")) != 0 {
		t.Errorf("capacity unknown: %s, want the claim's request", q.String())
	}
	for _, bad := range []struct {
		path  string
		nodes []corev1.Node
		want  string
	}{
		{"", []corev1.Node{node("a", "host-a")}, "no node directory"},
		{"/x", nil, "no nodes"},
		{"/x", []corev1.Node{node("a", "")}, "node a has no kubernetes.io/hostname label"},
	} {
		if _, err := Volume(bb, c, bad.path, bad.nodes, resource.Quantity{}); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Volume(%q, %d nodes): %v, want %q", bad.path, len(bad.nodes), err, bad.want)
		}
	}
}

func TestMountsAndConflicts(t *testing.T) {
	pod := func(name string, claims ...string) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}
		for _, c := range claims {
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: c, VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c}}})
		}
		return p
	}
	for _, c := range []struct {
		pod  corev1.Pod
		want bool
	}{
		{pod("b", "other", "scratch"), true},
		{pod("a", "scratch"), true},
		{pod("else", "other"), false},
		{pod("none"), false},
	} {
		if got := Mounts(&c.pod, "scratch"); got != c.want {
			t.Errorf("Mounts(%s) = %v, want %v", c.pod.Name, got, c.want)
		}
	}
	bb := bbOf(v1alpha1.EngineLocal, "", "")
	theirs := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "scratch", Namespace: "team"}}
	if Ours(bb, theirs) {
		t.Error("a claim with no owner is Ours")
	}
	if msg := IsNotYours(bb, theirs); !strings.Contains(msg, "spec.workload.claimName") || !strings.Contains(msg, "no owner") {
		t.Errorf("conflict message %q", msg)
	}
}
