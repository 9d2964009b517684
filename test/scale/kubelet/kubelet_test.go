package kubelet

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/agentapi"
	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/engine/local"
	"github.com/beeburst/beeburst/internal/nodetask"
)

func testBB() *v1alpha1.BurstBuffer {
	bb := &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Name: "bb", Namespace: "ns", UID: "u1"}}
	bb.Spec.Engine = v1alpha1.EngineLocal
	bb.Spec.Storage.Path = "/mnt/nvme"
	bb.Spec.Validation.Profile = v1alpha1.ProfileQuick
	return bb
}

// The tasks are read back from the pods the operator's own builders make.
func TestParseTask(t *testing.T) {
	bb := testBB()
	a, b := NewNode(0), NewNode(1)
	cases := []struct {
		pod     *corev1.Pod
		command string
		flag    string
		want    string
	}{
		{nodetask.DeviceProbePod(bb, "img", 0, a.Name, a.IP, 1), agentapi.CmdProbeDevice, agentapi.FlagRuntime, "2s"},
		{nodetask.NetClientPod(bb, "img", 0, b.Name, a.IP), agentapi.CmdNetClient, agentapi.FlagHost, a.IP},
		{nodetask.NetServerPod(bb, "img", 0, a.Name), agentapi.CmdNetServer, agentapi.FlagOneOff, ""},
		{nodetask.SweepPod(bb, "img", 1, 0, a.Name, 4, 2), agentapi.CmdIdeal, agentapi.FlagProcs, "4"},
		{local.PreparePod(bb, "img", 0, a.Name), agentapi.CmdDir + " " + agentapi.CmdDirCreate, agentapi.FlagPath, "/host/storage/beeburst/ns.bb"},
	}
	for _, c := range cases {
		task, ok := parseTask(c.pod)
		if !ok || task.command != c.command {
			t.Fatalf("%s: command %q (ok %v), want %q", c.pod.Name, task.command, ok, c.command)
		}
		if got, ok := task.flags[c.flag]; !ok || got != c.want {
			t.Errorf("%s: --%s = %q (set: %v), want %q", c.pod.Name, c.flag, got, ok, c.want)
		}
	}
	p := nodetask.SweepPod(bb, "img", 0, 0, a.Name, 1, 2)
	nodetask.InChain(bb, p, agentapi.Chain{After: []string{"x", "y"}, HoldFor: []string{"z"}})
	task, _ := parseTask(p)
	if !task.chained() || len(task.chain.After) != 2 || task.chain.HoldFor[0] != "z" || task.chain.Name != p.Name {
		t.Errorf("chain not read back: %+v", task.chain)
	}
}

// The model's reports pass the operator's decoder, and figures follow the model.
func TestReports(t *testing.T) {
	bb := testBB()
	n := NewNode(3)
	dev, _ := parseTask(nodetask.DeviceProbePod(bb, "img", 0, n.Name, n.IP, 1))
	rep := deviceReport(n, dev, "k")
	rep.Phase = bench.PhaseSucceeded
	one, _ := parseTask(nodetask.SweepPod(bb, "img", 0, 0, n.Name, 1, 2))
	four, _ := parseTask(nodetask.SweepPod(bb, "img", 1, 0, n.Name, 4, 2))
	r1, r4 := idealReport(n, one, "a"), idealReport(n, four, "b")
	r1.Phase, r4.Phase = bench.PhaseSucceeded, bench.PhaseSucceeded
	for _, r := range []bench.Report{rep, r1, r4} {
		msg, err := r.Compact(bench.TerminationMessageLimit)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := bench.DecodeReport(msg); err != nil {
			t.Errorf("%s: %v", r.Command, err)
		}
	}
	w := bench.Find(rep.Results, bench.OpWrite).BytesPerSecond
	if w > n.WriteBytesPerSecond || w < 0.95*n.WriteBytesPerSecond {
		t.Errorf("device write %.0f, node's %.0f", w, n.WriteBytesPerSecond)
	}
	w1, w4 := bench.Find(r1.Results, bench.OpWrite).BytesPerSecond, bench.Find(r4.Results, bench.OpWrite).BytesPerSecond
	if w1 >= w4 || w4 > w {
		t.Errorf("sweep: 1 process %.0f, 4 processes %.0f, device %.0f: want 1 < 4 <= device", w1, w4, w)
	}
	if rep.Hardware == nil || rep.Hardware.LinkMbps != int64(n.LinkBytesPerSecond*8/1e6) {
		t.Errorf("link not discovered: %+v", rep.Hardware)
	}
}

// A chained pod measures only after the run before it on its node ended, and each pod goes
// pending, running, exited (with its report), then Succeeded.
func TestChainedRuns(t *testing.T) {
	bb := testBB()
	n := NewNode(0)
	cs := fake.NewClientset()
	k := New(cs, []Node{n}, logr.Discard())
	k.Speed = 10
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = k.Run(ctx) }()

	first := nodetask.SweepPod(bb, "img", 0, 0, n.Name, 1, 2)
	second := nodetask.SweepPod(bb, "img", 1, 0, n.Name, 4, 2)
	nodetask.InChain(bb, first, agentapi.Chain{StartWith: []string{first.Name, second.Name}, HoldFor: []string{second.Name}})
	nodetask.InChain(bb, second, agentapi.Chain{After: []string{first.Name}})
	for _, p := range []*corev1.Pod{second, first} {
		p.UID = types.UID("uid-" + p.Name)
		if _, err := cs.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ended := map[string]time.Time{}
	deadline := time.Now().Add(20 * time.Second)
	for len(ended) < 2 && time.Now().Before(deadline) {
		for _, name := range []string{first.Name, second.Name} {
			p, err := cs.CoreV1().Pods(bb.Namespace).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if p.Status.Phase == corev1.PodSucceeded && ended[name].IsZero() {
				ended[name] = time.Now()
				st := p.Status.ContainerStatuses[0].State.Terminated
				if st == nil || st.ExitCode != 0 {
					t.Fatalf("%s: succeeded without a terminated container: %+v", name, p.Status.ContainerStatuses)
				}
				rep, err := bench.DecodeReport([]byte(st.Message))
				if err != nil || rep.Phase != bench.PhaseSucceeded || len(rep.Results) != 2 {
					t.Fatalf("%s: report %+v, %v", name, rep, err)
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(ended) < 2 {
		t.Fatalf("not both ended: %v", ended)
	}
	f, s := runOf(t, cs, bb.Namespace, first.Name), runOf(t, cs, bb.Namespace, second.Name)
	if s.Before(f) {
		t.Errorf("the second run started (%v) before the first ended (%v)", s, f)
	}
}

// runOf is when a pod's run started (its report's start) or ended: the first's end, the
// second's start.
func runOf(t *testing.T, cs *fake.Clientset, ns, name string) time.Time {
	t.Helper()
	p, err := cs.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := bench.DecodeReport([]byte(p.Status.ContainerStatuses[0].State.Terminated.Message))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Results[0].Label == "ideal M=1 N=1" {
		return rep.EndTime
	}
	return rep.StartTime
}
