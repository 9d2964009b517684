package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/nodetask"
	"github.com/beeburst/beeburst/test/scale/kubelet"
)

// idleSettle is how long after the last Ready the idle spell starts.
const idleSettle = 10 * time.Second

// arrivalSettle is how long after the last create the arrivals' first visits (their stage-1
// pods, the first locks) still crowd the API server: the report counts the slow writes sent
// until then apart.
const arrivalSettle = 30 * time.Second

// benchNamespace holds the burst buffers: one namespace, as one project's jobs would.
const benchNamespace = "scale"

// size is one run's scale.
type size struct{ bbs, nodes int }

func (s size) String() string { return fmt.Sprintf("%d burst buffers on %d nodes", s.bbs, s.nodes) }

// options are the run's knobs (flags).
type options struct {
	root, kubeBin, manager string
	rate                   float64
	minNodes, maxNodes     int
	deleteShare            float64
	idle                   time.Duration
	timeout                time.Duration
	seed                   uint64
	speed                  float64
	keep                   bool
	profileDir             string
	// validation is the burst buffers' validation profile.
	validation v1alpha1.ValidationProfile
}

// result is what one size measured.
type result struct {
	size                 size
	sizes                []int // nodes per burst buffer, in creation order
	deletedMidway        int
	start, allReady      time.Time
	allCreated           time.Time
	idleStart, idleEnd   time.Time
	allGone              time.Time
	teardownStart        time.Time
	bbs                  map[types.NamespacedName]bbTimes
	notReady             []string
	peakRSS, rssAtReady  int64
	rssAtEnd             int64
	cpuAtReady, cpuTotal time.Duration
	machineToReady       cpuTimes // where the machine's CPU went from the first create to all Ready
	metricsAtReady       map[string]*dto.MetricFamily
	metricsAtIdleStart   map[string]*dto.MetricFamily
	metricsAtIdleEnd     map[string]*dto.MetricFamily
	metricsAtEnd         map[string]*dto.MetricFamily
	requests             map[string]requestCounts
	writeSeconds         map[string][]float64 // the API server's time for each of the manager's writes, per window
	slowWrites           map[string]*slowWrites
	slowVisits           map[string]*slowVisits // the manager's visits over slowVisitThreshold, per window
	eventsAtReady        map[string]int64
	eventsTotal          map[string]int64
	objects              map[string]int
	load                 [3]string // 1-minute load average: at the start, at all Ready, at the end
	kubeletPods          int64
	kubeletPatches       int64
	gcDeletes            int64
}

// runSize brings up a control plane, the nodes, the simulated kubelet and the manager, and
// plays the arrivals, the deletions mid-way, the wait until all are Ready, an idle spell and
// the teardown of all.
func runSize(ctx context.Context, o options, sz size, logf func(string, ...any)) (*result, error) {
	dir, err := os.MkdirTemp("", "beeburst-scale-")
	if err != nil {
		return nil, err
	}
	if !o.keep {
		defer os.RemoveAll(dir)
	}

	logf("%s: starting kube-apiserver and etcd (%s)", sz, dir)
	cl, err := startCluster(ctx, o.root, o.kubeBin, dir)
	if cl != nil {
		defer func() {
			if err := cl.stop(); err != nil {
				logf("stopping the control plane: %v", err)
			}
		}()
	}
	if err != nil {
		return nil, err
	}
	if err := cl.createNamespace(ctx, benchNamespace); err != nil {
		return nil, err
	}
	nodes := make([]kubelet.Node, sz.nodes)
	for i := range nodes {
		nodes[i] = kubelet.NewNode(i)
	}
	logf("%s: registering %d nodes", sz, len(nodes))
	if err := cl.registerNodes(ctx, nodes); err != nil {
		return nil, err
	}

	klet := kubelet.New(cl.cs, nodes, logger)
	klet.Speed = o.speed
	kctx, stopKubelet := context.WithCancel(ctx)
	defer stopKubelet()
	go func() { _ = klet.Run(kctx) }()

	dyn, err := dynamic.NewForConfig(cl.cfg)
	if err != nil {
		return nil, err
	}
	obs := newObserver(cl.cs, dyn)
	if err := obs.start(kctx); err != nil {
		return nil, err
	}

	logf("%s: starting the manager (%s)", sz, o.manager)
	mgr, err := startManager(o.manager, cl.kubeconfig, dir, o.profileDir != "")
	if err != nil {
		return nil, err
	}
	defer func() { _ = mgr.stop() }()

	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	c, err := client.New(cl.cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}

	res := &result{size: sz}
	res.load[0] = loadAverage()
	rng := rand.New(rand.NewPCG(o.seed, uint64(sz.bbs)<<32|uint64(sz.nodes)))
	load := make([]int, sz.nodes)
	holding := map[types.NamespacedName][]int{}
	release := func(key types.NamespacedName) {
		for _, i := range holding[key] {
			load[i]--
		}
		delete(holding, key)
	}
	deletes := make(chan types.NamespacedName, sz.bbs)

	logf("%s: creating burst buffers at %g per second", sz, o.rate)
	res.start = time.Now()
	cpuAtStart := readCPU(mgr.cmd.Process.Pid)
	if o.profileDir != "" {
		// The manager's CPU over the arrivals and the first minute after them.
		go func() {
			file := filepath.Join(o.profileDir, fmt.Sprintf("cpu-%dx%d.pprof", sz.bbs, sz.nodes))
			if err := mgr.profile("profile", int(float64(sz.bbs)/o.rate)+60, file); err != nil {
				logf("CPU profile: %v", err)
			}
		}()
		// The API server's over the same window: where the control plane's CPU goes.
		go func() {
			file := filepath.Join(o.profileDir, fmt.Sprintf("apiserver-cpu-%dx%d.pprof", sz.bbs, sz.nodes))
			if err := cl.profile(ctx, int(float64(sz.bbs)/o.rate)+60, file); err != nil {
				logf("API server CPU profile: %v", err)
			}
		}()
	}
	tick := time.NewTicker(time.Duration(float64(time.Second) / o.rate))
	defer tick.Stop()
	for i := 0; i < sz.bbs; i++ {
		// Deletions fall due between arrivals, on the same goroutine as the node book.
	drain:
		for {
			select {
			case key := <-deletes:
				if err := deleteBB(ctx, c, key); err != nil {
					return nil, err
				}
				obs.markDeleted(key)
				release(key)
			default:
				break drain
			}
		}
		n := o.minNodes + rng.IntN(o.maxNodes-o.minNodes+1)
		n = min(n, sz.nodes)
		chosen := leastLoaded(load, n, rng)
		key := types.NamespacedName{Namespace: benchNamespace, Name: fmt.Sprintf("bb-%04d", i)}
		obs.created(key, time.Now())
		if err := c.Create(ctx, burstBuffer(key, nodeNames(nodes, chosen), o.validation)); err != nil {
			return nil, fmt.Errorf("creating %s: %w", key, err)
		}
		holding[key] = chosen
		res.sizes = append(res.sizes, n)
		if rng.Float64() < o.deleteShare {
			after := 2*time.Second + time.Duration(rng.Float64()*float64(10*time.Second))
			time.AfterFunc(after, func() { deletes <- key })
		}
		<-tick.C
	}
	res.allCreated = time.Now()
	// The last deletions fall due after the last arrival.
	go func() {
		for key := range deletes {
			if err := deleteBB(ctx, c, key); err != nil {
				logf("deleting %s: %v", key, err)
			}
			obs.markDeleted(key)
		}
	}()

	logf("%s: waiting until every burst buffer is Ready (those deleted mid-way: gone)", sz)
	settled := func(bbs map[types.NamespacedName]*bbTimes) bool {
		for _, t := range bbs {
			switch {
			case !t.gone.IsZero():
			case t.deleted:
				return false
			case t.ready.IsZero() && t.phase != string(v1alpha1.PhaseFailed):
				return false
			}
		}
		return true
	}
	// Wait for the mid-way deletions to have fallen due (at most 12 s after the last arrival).
	time.Sleep(12 * time.Second)
	// The bound ends the wait, not the run: what was measured until then is reported.
	readyCtx, cancelReady := context.WithTimeout(ctx, o.timeout)
	defer cancelReady()
	if !obs.waitUntil(readyCtx, settled) {
		logf("%s: %s passed before all were Ready", sz, o.timeout)
	}
	res.bbs = obs.snapshot()
	res.allReady = res.start // the last Ready seen
	for k, t := range res.bbs {
		if t.deleted {
			res.deletedMidway++
			continue
		}
		if t.ready.IsZero() && t.gone.IsZero() {
			res.notReady = append(res.notReady, fmt.Sprintf("%s: %s %s", k.Name, t.phase, t.reason))
		}
		if t.ready.After(res.allReady) {
			res.allReady = t.ready
		}
	}
	sort.Strings(res.notReady)
	res.peakRSS, res.rssAtReady, res.cpuAtReady = mgr.usage()
	res.machineToReady = readCPU(mgr.cmd.Process.Pid).sub(cpuAtStart)
	res.load[1] = loadAverage()
	if res.metricsAtReady, err = mgr.scrape(); err != nil {
		return nil, err
	}
	res.eventsAtReady = obs.eventCounts()
	if o.keep {
		// The API server's own view (admission, storage, flow control per request) for a
		// closer look at what a slow write waited for.
		if raw, err := cl.cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx); err != nil {
			logf("the API server's metrics: %v", err)
		} else if err := os.WriteFile(filepath.Join(dir, "apiserver-metrics.txt"), raw, 0o600); err != nil {
			return nil, err
		}
	}
	if o.profileDir != "" {
		if err := mgr.profile("heap", 0, filepath.Join(o.profileDir, fmt.Sprintf("heap-%dx%d.pprof", sz.bbs, sz.nodes))); err != nil {
			logf("heap profile: %v", err)
		}
	}
	if res.objects, err = countObjects(ctx, c); err != nil {
		return nil, err
	}

	// Idle from 10 s after the last Ready on: the last ones' measuring pods are tidied then.
	logf("%s: idle for %s", sz, o.idle+idleSettle)
	time.Sleep(idleSettle)
	res.idleStart = time.Now()
	if res.metricsAtIdleStart, err = mgr.scrape(); err != nil {
		return nil, err
	}
	time.Sleep(o.idle)
	res.idleEnd = time.Now()
	if res.metricsAtIdleEnd, err = mgr.scrape(); err != nil {
		return nil, err
	}

	logf("%s: deleting every burst buffer at %g per second", sz, o.rate)
	res.teardownStart = time.Now()
	var list v1alpha1.BurstBufferList
	if err := c.List(ctx, &list, client.InNamespace(benchNamespace)); err != nil {
		return nil, err
	}
	for i := range list.Items {
		if err := deleteBB(ctx, c, client.ObjectKeyFromObject(&list.Items[i])); err != nil {
			return nil, err
		}
		<-tick.C
	}
	gone := func(bbs map[types.NamespacedName]*bbTimes) bool {
		for _, t := range bbs {
			if t.gone.IsZero() {
				return false
			}
		}
		return true
	}
	goneCtx, cancelGone := context.WithTimeout(ctx, o.timeout)
	defer cancelGone()
	if !obs.waitUntil(goneCtx, gone) {
		logf("%s: %s passed before all were gone", sz, o.timeout)
	}
	res.allGone = time.Now()
	res.metricsAtEnd, err = mgr.scrape()
	if err != nil {
		return nil, err
	}
	res.peakRSS, res.rssAtEnd, res.cpuTotal = mgr.usage()
	res.load[2] = loadAverage()
	res.eventsTotal = obs.eventCounts()
	res.kubeletPods, res.kubeletPatches, res.gcDeletes = klet.Started.Load(), klet.StatusPatches.Load(), obs.gcDeletes.Load()

	logf("%s: stopping the manager; reading the audit log", sz)
	_ = mgr.stop()
	windows := []window{
		{"run", res.start.Add(-time.Minute), res.allGone.Add(time.Minute)},
		{"toReady", res.start.Add(-time.Minute), res.allReady},
		{"idle", res.idleStart, res.idleEnd},
		{"teardown", res.teardownStart, res.allGone.Add(time.Minute)},
		{"arrivals", res.start, res.allCreated.Add(arrivalSettle)},
	}
	audit, err := readAudit(cl.auditLog, windows)
	if err != nil {
		return nil, err
	}
	res.requests, res.writeSeconds, res.slowWrites = audit.counts, audit.writes, audit.slow
	res.slowVisits, err = readSlowVisits(mgr.logFile.Name(), windows)
	return res, err
}

func deleteBB(ctx context.Context, c client.Client, key types.NamespacedName) error {
	bb := &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	return client.IgnoreNotFound(c.Delete(ctx, bb))
}

// burstBuffer is a job's burst buffer: the local engine on the nodes its job got (a selector
// on their host names, as a batch scheduler's allocation), measured with profile.
func burstBuffer(key types.NamespacedName, nodes []string, profile v1alpha1.ValidationProfile) *v1alpha1.BurstBuffer {
	return &v1alpha1.BurstBuffer{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
		Spec: v1alpha1.BurstBufferSpec{
			Engine: v1alpha1.EngineLocal,
			Nodes: v1alpha1.NodesSpec{Count: int32(len(nodes)), Selector: &metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: corev1.LabelHostname, Operator: metav1.LabelSelectorOpIn, Values: nodes}},
			}},
			Storage:    v1alpha1.StorageSpec{Path: "/mnt/nvme"},
			Validation: v1alpha1.ValidationSpec{Profile: profile},
		},
	}
}

// leastLoaded picks n nodes among those carrying the fewest burst buffers (ties at random),
// as a batch scheduler spreading jobs would, and books them.
func leastLoaded(load []int, n int, rng *rand.Rand) []int {
	idx := rng.Perm(len(load))
	sort.SliceStable(idx, func(a, b int) bool { return load[idx[a]] < load[idx[b]] })
	chosen := append([]int(nil), idx[:n]...)
	for _, i := range chosen {
		load[i]++
	}
	sort.Ints(chosen)
	return chosen
}

func nodeNames(nodes []kubelet.Node, idx []int) []string {
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = nodes[j].Name
	}
	return out
}

// countObjects counts what exists in the API for the burst buffers: their pods, ConfigMaps,
// Secrets and events, the node locks and the per-node figure cache.
func countObjects(ctx context.Context, c client.Client) (map[string]int, error) {
	out := map[string]int{}
	managed := client.MatchingLabels{nodetask.LabelManagedBy: nodetask.ManagedBy}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, managed); err != nil {
		return nil, err
	}
	out["pods"] = len(pods.Items)
	var cms corev1.ConfigMapList
	if err := c.List(ctx, &cms, managed); err != nil {
		return nil, err
	}
	for _, cm := range cms.Items {
		if cm.Namespace == operatorNamespace {
			out["configmaps (per-node figure cache)"]++
		} else {
			out["configmaps (per burst buffer)"]++
		}
	}
	var secrets corev1.SecretList
	if err := c.List(ctx, &secrets, managed); err != nil {
		return nil, err
	}
	out["secrets"] = len(secrets.Items)
	var leases metav1.PartialObjectMetadataList
	leases.SetGroupVersionKind(schemaGVK("coordination.k8s.io", "v1", "LeaseList"))
	if err := c.List(ctx, &leases, client.InNamespace(operatorNamespace)); err != nil {
		return nil, err
	}
	out["leases (node locks)"] = len(leases.Items)
	var events metav1.PartialObjectMetadataList
	events.SetGroupVersionKind(schemaGVK("events.k8s.io", "v1", "EventList"))
	if err := c.List(ctx, &events, client.InNamespace(benchNamespace)); err != nil {
		return nil, err
	}
	out["events"] = len(events.Items)
	return out, nil
}

func schemaGVK(group, version, kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: group, Version: version, Kind: kind}
}

// loadAverage is the machine's 1-minute load average: other work on the machine slows the
// control plane and the manager alike.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(raw))[0]
}
