// Package bench is `make bench`: how fast beeburst gets a burst buffer to Ready on the
// testbed, and what that costs the manager. It prints figures; it asserts nothing about time
// (a benchmark that fails on a slow machine measures the machine). Not part of `make test`.
//
// It needs a cluster with the operator deployed (hack/cluster.sh bench brings up the
// testbed, deploys, runs this and tears down) and BEEBURST_BENCH=1; otherwise it skips.
package bench

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/engine/local"
	"github.com/beeburst/beeburst/internal/nodetask"
)

const (
	namespace         = "beeburst-bench"
	operatorNamespace = "beeburst-system"
)

// stages are the conditions on the way to Ready, in order; each one's share is the time from
// the previous one's transition to True (creation for the first) to its own.
var stages = []string{
	v1alpha1.ConditionLimitsEstimated, v1alpha1.ConditionProvisioned, v1alpha1.ConditionComponentsMeasured,
	v1alpha1.ConditionValidated, v1alpha1.ConditionReady,
}

func TestBench(t *testing.T) {
	if os.Getenv("BEEBURST_BENCH") != "1" {
		t.Skip("BEEBURST_BENCH=1 and a cluster with the operator deployed are needed (make bench does both)")
	}
	cfg, err := config.GetConfig()
	if err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_ = c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})
	nodes := workers(ctx, t, c)
	fmt.Printf("bench: %d worker node(s); %s\n", len(nodes), machine())

	for _, n := range counts() {
		round(ctx, t, c, n, len(nodes), false)
	}
	// The same nodes, storage and layout once more, now that the rounds above left fresh
	// per-node figures and a sweep: one alone, then twenty at once, that may reuse them (the
	// defaults). The lone one shows what a reuse costs; twenty show the kubelets' pod starts,
	// and the floor before each (bareStarts) what the kubelets take for those pods alone.
	for _, n := range freshCounts() {
		bareStarts(ctx, t, c, n, nodes)
		round(ctx, t, c, n, len(nodes), true)
	}
	manager(t)
}

// freshCounts are the numbers of burst buffers the fresh-cache rounds create at once
// (BENCH_FRESH, default 1,20; 0 skips them).
func freshCounts() []int { return countList("BENCH_FRESH", "1,20") }

// counts are the numbers of burst buffers created at once (BENCH_COUNTS, default 1,5,20).
func counts() []int { return countList("BENCH_COUNTS", "1,5,20") }

// countList reads a comma-separated list of positive counts from the environment variable
// key (def when unset); zeros and anything unreadable are left out.
func countList(key, def string) []int {
	var out []int
	for _, f := range strings.Split(envOr(key, def), ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func machine() string {
	out, _ := exec.Command("sh", "-c", "nproc; cat /proc/loadavg").Output()
	f := strings.Fields(string(out))
	if len(f) < 2 {
		return "host unknown"
	}
	return fmt.Sprintf("host: %s CPUs, load %s", f[0], f[1])
}

// workers names the nodes that are not the control plane's.
func workers(ctx context.Context, t *testing.T, c client.Client) []string {
	var nl corev1.NodeList
	if err := c.List(ctx, &nl); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, node := range nl.Items {
		if _, cp := node.Labels["node-role.kubernetes.io/control-plane"]; !cp {
			names = append(names, node.Name)
		}
	}
	return names
}

// round creates n quick-profile burst buffers at once on every worker, waits for all to be
// Ready, prints each one's time and stage shares, and deletes them. It starts once the rounds
// before left no task pod. Without reuse every one measures for itself
// (reuseComponentResultsFor 0s: reuse would make the later ones free); with it they take the
// defaults, which reuse fresh figures of the same nodes.
func round(ctx context.Context, t *testing.T, c client.Client, n, nodes int, reuse bool) {
	name, how := fmt.Sprintf("bench-%d", n), "each measuring for itself"
	validation := v1alpha1.ValidationSpec{Profile: v1alpha1.ProfileQuick, ReuseComponentResultsFor: "0s"}
	if reuse {
		name, how = fmt.Sprintf("fresh-%d", n), "with fresh figures of these nodes to reuse (validation defaults)"
		validation = v1alpha1.ValidationSpec{Profile: v1alpha1.ProfileQuick}
	}
	quiet(ctx, t, c)
	fmt.Printf("\nbench: %d burst buffer(s) created at once, quick profile, %d node(s) each, %s\n", n, nodes, how)
	var bbs []*v1alpha1.BurstBuffer
	start := time.Now()
	for i := 0; i < n; i++ {
		bb := &v1alpha1.BurstBuffer{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", name, i), Namespace: namespace},
			Spec: v1alpha1.BurstBufferSpec{Engine: v1alpha1.EngineLocal, Nodes: v1alpha1.NodesSpec{Count: int32(nodes)},
				Validation: validation},
		}
		if err := c.Create(ctx, bb); err != nil {
			t.Fatal(err)
		}
		bbs = append(bbs, bb)
	}
	// Stage 1 in the status: how long after apply the estimate is there.
	firstEstimate := map[string]time.Duration{}
	ready := map[string]time.Duration{}
	deadline := start.Add(time.Duration(n)*90*time.Second + 3*time.Minute)
	for len(ready) < n && time.Now().Before(deadline) {
		for _, bb := range bbs {
			var cur v1alpha1.BurstBuffer
			if err := c.Get(ctx, client.ObjectKeyFromObject(bb), &cur); err != nil {
				continue
			}
			if _, ok := firstEstimate[bb.Name]; !ok && cur.Status.Limits != nil && cur.Status.Limits.Estimated != nil {
				firstEstimate[bb.Name] = time.Since(start)
			}
			if _, ok := ready[bb.Name]; !ok && meta.IsStatusConditionTrue(cur.Status.Conditions, v1alpha1.ConditionReady) {
				ready[bb.Name] = time.Since(start)
				fmt.Printf("  %-12s Ready after %5.1f s  %s%s\n", bb.Name, ready[bb.Name].Seconds(), shares(&cur), reusedFrom(&cur))
			}
			if cur.Status.Phase == v1alpha1.PhaseFailed || cur.Status.Phase == v1alpha1.PhaseDegraded {
				t.Errorf("%s: %s: %s", bb.Name, cur.Status.Phase, meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionReady).Message)
				ready[bb.Name] = -1
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	if len(ready) < n {
		t.Errorf("%d of %d burst buffers Ready before the deadline", len(ready), n)
	}
	var rs, es []float64
	for _, d := range ready {
		if d > 0 {
			rs = append(rs, d.Seconds())
		}
	}
	for _, d := range firstEstimate {
		es = append(es, d.Seconds())
	}
	fmt.Printf("  apply -> Ready: min %.1f s, median %.1f s, max %.1f s; stage 1 in the status after %.1f s (median)\n",
		quantile(rs, 0), quantile(rs, 0.5), quantile(rs, 1), quantile(es, 0.5))
	del := time.Now()
	for _, bb := range bbs {
		_ = c.Delete(ctx, bb)
	}
	_ = wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		var l v1alpha1.BurstBufferList
		err := c.List(ctx, &l, client.InNamespace(namespace))
		return err == nil && len(l.Items) == 0, nil
	})
	fmt.Printf("  all deleted after %.1f s\n", time.Since(del).Seconds())
}

// bareStarts measures what the kubelets alone take to run the pods that n burst buffers of the
// local engine start when they reuse every figure: one prepare pod per node each, the same
// pod (image, volume, command) in the same namespace, created at once by the bench, with no
// operator in between. A fresh round's apply -> Ready above this floor is the operator's.
// The pods carry none of the operator's labels, so that it neither sees nor tidies them; all
// of them make the same directory, which one clean pod per node removes afterwards.
func bareStarts(ctx context.Context, t *testing.T, c client.Client, n int, names []string) {
	image, err := agentImage(ctx, c)
	if err != nil {
		t.Errorf("the floor of pod starts: %v", err)
		return
	}
	bb := &v1alpha1.BurstBuffer{
		ObjectMeta: metav1.ObjectMeta{Name: "floor", Namespace: namespace},
		Spec:       v1alpha1.BurstBufferSpec{Storage: v1alpha1.StorageSpec{Path: storagePath(ctx, t, c)}},
		Status:     v1alpha1.BurstBufferStatus{TaskNamespace: operatorNamespace},
	}
	quiet(ctx, t, c)
	bare := func(p *corev1.Pod) *corev1.Pod {
		p.Labels, p.OwnerReferences = map[string]string{"app.kubernetes.io/name": "beeburst-bench"}, nil
		return p
	}
	var pods []*corev1.Pod
	for i := 0; i < n*len(names); i++ {
		pods = append(pods, bare(local.PreparePod(bb, image, i, names[i%len(names)])))
	}
	took, ok := runAll(ctx, t, c, pods)
	if ok {
		fmt.Printf("\nbench: the kubelets alone: %d prepare pods (what %d burst buffer(s) start on %d node(s)) created at once by the bench, no operator: all exited 0 after %.1f s\n",
			len(pods), n, len(names), took.Seconds())
	}
	var cleans []*corev1.Pod
	for i, node := range names {
		cleans = append(cleans, bare(local.CleanPod(bb, image, i, node)))
	}
	runAll(ctx, t, c, cleans)
	gone(ctx, t, c, append(pods, cleans...))
}

// quiet waits until the burst buffers of the rounds before (the bench's namespace) have no
// task pod left: the kubelets tear down the sandboxes of deleted pods, and that work must not
// fall into the next figure. Other burst buffers of a shared cluster are not waited for.
func quiet(ctx context.Context, t *testing.T, c client.Client) {
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		var pods corev1.PodList
		err := c.List(ctx, &pods, client.MatchingLabels{nodetask.LabelBurstBufferNamespace: namespace})
		return err == nil && len(pods.Items) == 0, nil
	})
	if err != nil {
		t.Errorf("task pods of deleted burst buffers still there 3 minutes later")
	}
}

// gone deletes pods and waits until they are gone: their sandboxes' teardown must not fall
// into the round after.
func gone(ctx context.Context, t *testing.T, c client.Client, pods []*corev1.Pod) {
	for _, p := range pods {
		_ = c.Delete(ctx, p)
	}
	left := len(pods)
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		left = 0
		for _, p := range pods {
			if err := c.Get(ctx, client.ObjectKeyFromObject(p), &corev1.Pod{}); !apierrors.IsNotFound(err) {
				left++
			}
		}
		return left == 0, nil
	})
	if err != nil {
		t.Errorf("%d of the bench's pods still there 2 minutes after their deletion", left)
	}
}

// storagePath is spec.storage.path of the rounds' burst buffers, which leave it to the API
// server's default: read from a dry-run creation.
func storagePath(ctx context.Context, t *testing.T, c client.Client) string {
	bb := &v1alpha1.BurstBuffer{
		ObjectMeta: metav1.ObjectMeta{Name: "floor", Namespace: namespace},
		Spec:       v1alpha1.BurstBufferSpec{Engine: v1alpha1.EngineLocal, Nodes: v1alpha1.NodesSpec{Count: 1}},
	}
	if err := c.Create(ctx, bb, client.DryRunAll); err != nil {
		t.Fatalf("a dry-run burst buffer: %v", err)
	}
	return bb.Spec.Storage.Path
}

// runAll creates pods at once and waits until all succeeded, judged as the operator judges its
// task pods (nodetask.StateOf: the containers' exit, which the kubelet reports before the
// pod's phase): how long that took, and false (with the test marked failed) when one failed
// or they did not finish in time.
func runAll(ctx context.Context, t *testing.T, c client.Client, pods []*corev1.Pod) (time.Duration, bool) {
	start := time.Now()
	for _, p := range pods {
		if err := c.Create(ctx, p); err != nil {
			t.Errorf("creating %s: %v", p.Name, err)
			return 0, false
		}
	}
	var failed error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		done := 0
		for _, p := range pods {
			var cur corev1.Pod
			if err := c.Get(ctx, client.ObjectKeyFromObject(p), &cur); err != nil {
				continue
			}
			switch st, msg := nodetask.StateOf(&cur); st {
			case nodetask.Succeeded:
				done++
			case nodetask.Failed:
				failed = fmt.Errorf("%s on %s failed: %s", cur.Name, cur.Spec.NodeName, msg)
				return false, failed
			}
		}
		return done == len(pods), nil
	})
	switch {
	case failed != nil:
		t.Error(failed)
		return 0, false
	case err != nil:
		t.Errorf("%d pods not all exited 0 within 5 minutes", len(pods))
		return 0, false
	}
	return time.Since(start), true
}

// agentImage is the image the deployed manager runs its node tasks with (--agent-image).
func agentImage(ctx context.Context, c client.Client) (string, error) {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(operatorNamespace)); err != nil {
		return "", err
	}
	for _, p := range pods.Items {
		for _, ctr := range p.Spec.Containers {
			for _, a := range ctr.Args {
				if img, ok := strings.CutPrefix(a, "--agent-image="); ok {
					return img, nil
				}
			}
		}
	}
	return "", fmt.Errorf("no pod in %s runs with --agent-image", operatorNamespace)
}

// reusedFrom says where a burst buffer's components and sweep came from when it did not
// measure them ("" when it did).
func reusedFrom(bb *v1alpha1.BurstBuffer) string {
	l := bb.Status.Limits
	if l == nil {
		return ""
	}
	var parts []string
	if l.Components != nil && l.Components.ReusedFrom != nil {
		r := l.Components.ReusedFrom
		parts = append(parts, fmt.Sprintf("components from %s (%.0f s old)", r.BurstBuffer, bb.CreationTimestamp.Sub(r.MeasuredTime.Time).Seconds()))
	}
	if l.Sweep != nil && l.Sweep.ReusedFrom != nil {
		r := l.Sweep.ReusedFrom
		parts = append(parts, fmt.Sprintf("sweep from %s (%.0f s old)", r.BurstBuffer, bb.CreationTimestamp.Sub(r.MeasuredTime.Time).Seconds()))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; reused: " + strings.Join(parts, ", ")
}

// shares: each stage's time from the previous stage's transition to True (creation first).
func shares(bb *v1alpha1.BurstBuffer) string {
	prev := bb.CreationTimestamp.Time
	var parts []string
	for _, typ := range stages {
		c := meta.FindStatusCondition(bb.Status.Conditions, typ)
		if c == nil || c.Status != metav1.ConditionTrue {
			continue
		}
		d := c.LastTransitionTime.Sub(prev)
		if d < 0 {
			d = 0
		}
		parts = append(parts, fmt.Sprintf("%s %ds", typ, int(d.Seconds())))
		prev = c.LastTransitionTime.Time
	}
	return strings.Join(parts, ", ")
}

func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[int(math.Round(q*float64(len(s)-1)))]
}

// manager prints the manager's memory and reconcile latency from its own metrics.
func manager(t *testing.T) {
	out, err := exec.Command("kubectl", "get", "--raw",
		"/api/v1/namespaces/"+operatorNamespace+"/services/beeburst-manager-metrics:metrics/proxy/metrics").CombinedOutput()
	if err != nil {
		t.Errorf("scraping the manager: %v: %s", err, out)
		return
	}
	scrape := string(out)
	fmt.Printf("\nbench: manager after the rounds: resident memory %.0f MiB, Go heap in use %.0f MiB\n",
		value(scrape, "process_resident_memory_bytes", "")/(1<<20), value(scrape, "go_memstats_heap_inuse_bytes", "")/(1<<20))
	p50, p99, count := histogramQuantiles(scrape, "controller_runtime_reconcile_time_seconds", `controller="burstbuffer"`)
	fmt.Printf("bench: reconcile latency of the burstbuffer controller over %d reconciles: p50 <= %s, p99 <= %s (histogram bucket bounds)\n", int(count), p50, p99)
}

var sampleLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)`)

func value(scrape, name, labels string) float64 {
	for _, line := range strings.Split(scrape, "\n") {
		m := sampleLine.FindStringSubmatch(line)
		if m != nil && m[1] == name && strings.Contains(m[2], labels) {
			v, _ := strconv.ParseFloat(m[3], 64)
			return v
		}
	}
	return math.NaN()
}

// histogramQuantiles reads the cumulative buckets of a histogram (summed over series that
// match labels) and names the upper bounds below which 50% and 99% of observations fall.
func histogramQuantiles(scrape, name, labels string) (string, string, float64) {
	buckets := map[float64]float64{}
	le := regexp.MustCompile(`le="([^"]+)"`)
	for _, line := range strings.Split(scrape, "\n") {
		m := sampleLine.FindStringSubmatch(line)
		if m == nil || m[1] != name+"_bucket" || !strings.Contains(m[2], labels) {
			continue
		}
		b := le.FindStringSubmatch(m[2])
		if b == nil {
			continue
		}
		bound := math.Inf(1)
		if b[1] != "+Inf" {
			bound, _ = strconv.ParseFloat(b[1], 64)
		}
		v, _ := strconv.ParseFloat(m[3], 64)
		buckets[bound] += v
	}
	var bounds []float64
	for b := range buckets {
		bounds = append(bounds, b)
	}
	sort.Float64s(bounds)
	total := 0.0
	if len(bounds) > 0 {
		total = buckets[bounds[len(bounds)-1]]
	}
	at := func(q float64) string {
		for _, b := range bounds {
			if buckets[b] >= q*total {
				if math.IsInf(b, 1) {
					return "+Inf"
				}
				return (time.Duration(b * float64(time.Second))).String()
			}
		}
		return "unknown"
	}
	return at(0.5), at(0.99), total
}
