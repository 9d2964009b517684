package kubelet

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/agentapi"
	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/nodetask"
)

// Timing of a kubelet and the agent, as measured on the testbed (docs/architecture.md, "How
// long the quick profile takes"). Runtimes come from each task's arguments.
const (
	// pendingDelay: the kubelet's first report of a pod it admitted (ContainerCreating).
	pendingDelay = 100 * time.Millisecond
	// startDelay: from that report to the container running (sandbox, volumes, start).
	startDelay = 400 * time.Millisecond
	// exitToPhase: the kubelet reports a container's exit about a second before it writes
	// the pod's phase, on a later sync.
	exitToPhase = 900 * time.Millisecond
	// killDelay: from a pod's deletion to the kubelet confirming it (deleting the object).
	killDelay = 300 * time.Millisecond
	// fioStart is what each fio invocation takes beyond its runtime.
	fioStart = 220 * time.Millisecond
	// startWithLimit and holdLimit are the agent's bounds of a chain's waits (cmd/agent).
	startWithLimit = 30 * time.Second
	holdLimit      = 10 * time.Second
)

// Kubelet plays the kubelets of Nodes: it runs every pod the operator binds to one of them.
type Kubelet struct {
	Client kubernetes.Interface
	Log    logr.Logger
	// Speed divides every delay and runtime (1: real time).
	Speed float64

	nodes map[string]Node
	byIP  map[string]string

	mu      sync.Mutex
	runs    map[types.UID]*podRun
	chains  map[string]*chainDir
	servers map[string]*server

	// Counters of what it did.
	Started, Succeeded, Failed, Cancelled, StatusPatches, Deletes atomic.Int64
}

// New is a kubelet for nodes.
func New(c kubernetes.Interface, nodes []Node, log logr.Logger) *Kubelet {
	k := &Kubelet{Client: c, Log: log, Speed: 1, nodes: map[string]Node{}, byIP: map[string]string{},
		runs: map[types.UID]*podRun{}, chains: map[string]*chainDir{}, servers: map[string]*server{}}
	for _, n := range nodes {
		k.nodes[n.Name], k.byIP[n.IP] = n, n.Name
	}
	return k
}

// podRun is one pod the kubelet runs.
type podRun struct {
	cancel  context.CancelFunc
	deleted bool
}

// Run watches the operator's pods until ctx ends.
func (k *Kubelet) Run(ctx context.Context) error {
	f := informers.NewSharedInformerFactoryWithOptions(k.Client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = nodetask.LabelManagedBy + "=" + nodetask.ManagedBy
	}))
	inf := f.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { k.saw(ctx, o) },
		UpdateFunc: func(_, o any) { k.saw(ctx, o) },
		DeleteFunc: func(o any) {
			if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
				o = d.Obj
			}
			if p, ok := o.(*corev1.Pod); ok {
				k.forget(p.UID)
			}
		},
	}); err != nil {
		return err
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return ctx.Err()
	}
	<-ctx.Done()
	f.Shutdown()
	return nil
}

func (k *Kubelet) saw(ctx context.Context, o any) {
	pod, ok := o.(*corev1.Pod)
	if !ok {
		return
	}
	if _, mine := k.nodes[pod.Spec.NodeName]; !mine {
		return // unscheduled, or another node's
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	r := k.runs[pod.UID]
	if pod.DeletionTimestamp != nil {
		if r == nil {
			r = &podRun{cancel: func() {}}
			k.runs[pod.UID] = r
		}
		if !r.deleted {
			r.deleted = true
			r.cancel()
			go k.confirmDeletion(ctx, pod.DeepCopy())
		}
		return
	}
	if r != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return
	}
	rctx, cancel := context.WithCancel(ctx)
	k.runs[pod.UID] = &podRun{cancel: cancel}
	k.Started.Add(1)
	go k.run(rctx, pod.DeepCopy())
}

func (k *Kubelet) forget(uid types.UID) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if r := k.runs[uid]; r != nil {
		r.cancel()
		delete(k.runs, uid)
	}
}

// confirmDeletion is the kubelet's end of a graceful deletion: the container is stopped (the
// run's context is cancelled), then the object is deleted for good.
func (k *Kubelet) confirmDeletion(ctx context.Context, pod *corev1.Pod) {
	if !k.sleep(ctx, killDelay) {
		return
	}
	err := k.Client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To(int64(0)), Preconditions: &metav1.Preconditions{UID: &pod.UID},
	})
	k.Deletes.Add(1)
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) && ctx.Err() == nil {
		k.Log.Error(err, "deleting a pod", "pod", pod.Namespace+"/"+pod.Name)
	}
}

// run is a pod's life on its node: admitted, its container running, the agent's task, the
// container's exit with the report as its termination message, then the pod's phase.
func (k *Kubelet) run(ctx context.Context, pod *corev1.Pod) {
	node := k.nodes[pod.Spec.NodeName]
	if !k.sleep(ctx, pendingDelay) {
		return
	}
	created := metav1.Now()
	k.patchStatus(ctx, pod, map[string]any{
		"phase": corev1.PodPending, "hostIP": node.IP, "hostIPs": []map[string]string{{"ip": node.IP}}, "startTime": created,
		"conditions": conditions(created, false, false),
		"containerStatuses": []map[string]any{{
			"name": pod.Spec.Containers[0].Name, "image": pod.Spec.Containers[0].Image, "imageID": "", "ready": false,
			"restartCount": 0, "started": false, "state": map[string]any{"waiting": map[string]string{"reason": "ContainerCreating"}},
		}},
	})
	if !k.sleep(ctx, startDelay) {
		return
	}
	started := metav1.Now()
	podIP := node.IP
	if !pod.Spec.HostNetwork {
		podIP = podAddress(pod.UID)
	}
	status := map[string]any{
		"phase": corev1.PodRunning, "podIP": podIP, "podIPs": []map[string]string{{"ip": podIP}},
		"conditions":        conditions(created, true, true),
		"containerStatuses": []map[string]any{containerStatus(pod, true, map[string]any{"running": map[string]any{"startedAt": started}})},
	}
	k.patchStatus(ctx, pod, status)

	rep, code := k.execute(ctx, pod, node)
	if ctx.Err() != nil {
		k.Cancelled.Add(1)
		return // deleted: confirmDeletion removes it
	}
	msg, err := rep.Compact(bench.TerminationMessageLimit)
	if err != nil {
		msg = []byte(err.Error())
	}
	reason := "Completed"
	if code != 0 {
		reason = "Error"
	}
	finished := metav1.Now()
	term := map[string]any{"terminated": map[string]any{"exitCode": code, "reason": reason, "message": string(msg),
		"startedAt": started, "finishedAt": finished, "containerID": containerID(pod.UID)}}
	k.patchStatus(ctx, pod, map[string]any{
		"conditions":        conditions(created, true, false),
		"containerStatuses": []map[string]any{containerStatus(pod, false, term)},
	})
	if !k.sleep(ctx, exitToPhase) {
		return
	}
	phase := corev1.PodSucceeded
	if code != 0 {
		phase = corev1.PodFailed
		k.Failed.Add(1)
	} else {
		k.Succeeded.Add(1)
	}
	k.patchStatus(ctx, pod, map[string]any{"phase": phase})
}

func containerStatus(pod *corev1.Pod, ready bool, state map[string]any) map[string]any {
	return map[string]any{
		"name": pod.Spec.Containers[0].Name, "image": pod.Spec.Containers[0].Image, "imageID": "sim://" + pod.Spec.Containers[0].Image,
		"containerID": containerID(pod.UID), "ready": ready, "started": ready, "restartCount": 0, "state": state,
	}
}

func containerID(uid types.UID) string { return "sim://" + string(uid) }

// podAddress is a pod-network address for a pod that is not in the host network.
func podAddress(uid types.UID) string {
	n := int(unit(string(uid)) * 256 * 254)
	return fmt.Sprintf("10.244.%d.%d", n/254, n%254+1)
}

func conditions(since metav1.Time, running, ready bool) []map[string]any {
	st := func(b bool) corev1.ConditionStatus {
		if b {
			return corev1.ConditionTrue
		}
		return corev1.ConditionFalse
	}
	c := func(t corev1.PodConditionType, s corev1.ConditionStatus) map[string]any {
		return map[string]any{"type": t, "status": s, "lastTransitionTime": since, "lastProbeTime": nil}
	}
	return []map[string]any{
		c(corev1.PodReadyToStartContainers, st(running)), c(corev1.PodInitialized, corev1.ConditionTrue),
		c(corev1.PodReady, st(ready)), c(corev1.ContainersReady, st(ready)), c(corev1.PodScheduled, corev1.ConditionTrue),
	}
}

// patchStatus merges status into the pod's status, as a kubelet's status manager does (it
// patches too), with the pod's UID as precondition.
func (k *Kubelet) patchStatus(ctx context.Context, pod *corev1.Pod, status map[string]any) {
	body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"uid": pod.UID}, "status": status})
	for attempt := 0; ; attempt++ {
		_, err := k.Client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, body, metav1.PatchOptions{}, "status")
		k.StatusPatches.Add(1)
		if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) || ctx.Err() != nil {
			return
		}
		if attempt == 5 {
			k.Log.Error(err, "patching a pod's status", "pod", pod.Namespace+"/"+pod.Name)
			return
		}
		if !k.sleep(ctx, 200*time.Millisecond) {
			return
		}
	}
}

// execute is the agent's run: its turn in the chain, its task, its report and exit code.
func (k *Kubelet) execute(ctx context.Context, pod *corev1.Pod, node Node) (bench.Report, int32) {
	t, ok := parseTask(pod)
	if !ok || pod.Spec.RestartPolicy == corev1.RestartPolicyAlways {
		// Not the agent, or a long-running service: it runs until it is deleted.
		<-ctx.Done()
		return bench.Report{}, 0
	}
	rep := bench.Report{Node: node.Name, StartTime: time.Now().UTC()}
	timeout := t.duration(agentapi.FlagTimeout, 5*time.Minute)
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if t.chained() {
		k.mark(node.Name, t.chain.Dir, t.chain.Name, "started")
		k.await(tctx, node.Name, t.chain.Dir, t.chain.StartWith, "started", startWithLimit)
		if missing := k.await(tctx, node.Name, t.chain.Dir, t.chain.After, "done", 0); len(missing) > 0 {
			k.mark(node.Name, t.chain.Dir, t.chain.Name, "done")
			return failed(rep, t, fmt.Sprintf("chain: %v did not end before the run's deadline", missing)), 1
		}
	}
	rep.StartTime = time.Now().UTC()
	out, err := k.task(tctx, pod, t, node)
	out.Node, out.StartTime, out.EndTime = node.Name, rep.StartTime, time.Now().UTC()
	out.Tools = bench.Tools{Fio: "fio-3.33", Iperf3: "iperf 3.12"}
	code := int32(0)
	switch {
	case ctx.Err() != nil:
		out.Phase, out.Message, code = bench.PhaseCancelled, "cancelled by signal; the tool was stopped and its files removed", 3
	case err != nil:
		out.Phase, out.Message, code = bench.PhaseFailed, err.Error(), 1
	default:
		out.Phase = bench.PhaseSucceeded
	}
	if t.chained() {
		k.mark(node.Name, t.chain.Dir, t.chain.Name, "done")
		if code == 0 {
			k.await(ctx, node.Name, t.chain.Dir, t.chain.HoldFor, "done", holdLimit)
		}
	}
	return out, code
}

func failed(rep bench.Report, t task, msg string) bench.Report {
	rep.Command, rep.Phase, rep.Message, rep.EndTime = t.command, bench.PhaseFailed, msg, time.Now().UTC()
	return rep
}

// task does what the agent's subcommand does, in the model's time, and reports it.
func (k *Kubelet) task(ctx context.Context, pod *corev1.Pod, t task, node Node) (bench.Report, error) {
	key := string(pod.UID)
	switch t.command {
	case agentapi.CmdDir + " " + agentapi.CmdDirCreate:
		return bench.Report{Command: agentapi.CmdDir + "-" + agentapi.CmdDirCreate, FreeBytes: new(node.FreeBytes)}, k.sleepErr(ctx, 20*time.Millisecond)
	case agentapi.CmdDir + " " + agentapi.CmdDirRemove:
		if p := t.flags[agentapi.FlagPath]; p != "" {
			k.dropChains(node.Name, agentapi.ChainDirOf(p), serverKey(pod, node.Name))
		}
		return bench.Report{Command: agentapi.CmdDir + "-" + agentapi.CmdDirRemove}, k.sleepErr(ctx, 20*time.Millisecond)
	case agentapi.CmdProbeDevice:
		rt := t.duration(agentapi.FlagRuntime, 10*time.Second)
		return deviceReport(node, t, key), k.sleepErr(ctx, 2*(rt+fioStart))
	case agentapi.CmdIdeal:
		rt := t.duration(agentapi.FlagRuntime, 5*time.Second)
		return idealReport(node, t, key), k.sleepErr(ctx, 2*(rt+fioStart))
	case agentapi.CmdNetServer:
		s := k.server(serverKey(pod, node.Name))
		s.listen()
		select {
		case <-s.served:
			return bench.Report{Command: agentapi.CmdNetServer, Tool: bench.ToolIperf3, Message: "served 1 test(s)"}, nil
		case <-ctx.Done():
			return bench.Report{Command: agentapi.CmdNetServer}, ctx.Err()
		}
	case agentapi.CmdNetClient:
		return k.netClient(ctx, pod, t, node)
	}
	// Anything else the agent does (stage-in copies, module checks) succeeds at once.
	return bench.Report{Command: t.command}, k.sleepErr(ctx, 20*time.Millisecond)
}

// netClient is iperf3's client: it waits for its server (retrying for --connect-timeout, as
// the agent does), then sends for --time at the slower link's TCP rate.
func (k *Kubelet) netClient(ctx context.Context, pod *corev1.Pod, t task, node Node) (bench.Report, error) {
	rep := bench.Report{Command: agentapi.CmdNetClient, Tool: bench.ToolIperf3}
	srvNode, ok := k.byIP[t.flags[agentapi.FlagHost]]
	if !ok {
		return rep, fmt.Errorf("iperf3: unable to connect to server %s: no route to host", t.flags[agentapi.FlagHost])
	}
	s := k.server(serverKey(pod, srvNode))
	wait := time.NewTimer(k.scaled(t.duration(agentapi.FlagConnectTimeout, time.Minute)))
	defer wait.Stop()
	select {
	case <-s.listening:
	case <-wait.C:
		return rep, fmt.Errorf("iperf3: unable to connect to server %s: connection refused", t.flags[agentapi.FlagHost])
	case <-ctx.Done():
		return rep, ctx.Err()
	}
	secs := t.duration(agentapi.FlagTime, 10*time.Second)
	if err := k.sleepErr(ctx, secs+100*time.Millisecond); err != nil {
		return rep, err
	}
	s.serve()
	bps := min(node.LinkBytesPerSecond, k.nodes[srvNode].LinkBytesPerSecond) * tcpEfficiency * jitter(string(pod.UID), 0.01)
	rep.Results = []bench.Result{{Operation: bench.OpTransfer, BytesPerSecond: bps, Processes: t.int(agentapi.FlagStreams, 1),
		RuntimeSeconds: secs.Seconds(), Bytes: int64(bps * secs.Seconds())}}
	return rep, nil
}

// serverKey names a network probe's server: its burst buffer and node.
func serverKey(pod *corev1.Pod, node string) string {
	ns := pod.Namespace
	if v := pod.Labels[nodetask.LabelBurstBufferNamespace]; v != "" {
		ns = v
	}
	return ns + "/" + pod.Labels[v1alpha1.LabelBurstBuffer] + "@" + node
}

// server is a network probe's iperf3 server as its clients see it.
type server struct {
	once1, once2      sync.Once
	listening, served chan struct{}
}

func (s *server) listen() { s.once1.Do(func() { close(s.listening) }) }
func (s *server) serve()  { s.once2.Do(func() { close(s.served) }) }

func (k *Kubelet) server(key string) *server {
	k.mu.Lock()
	defer k.mu.Unlock()
	s := k.servers[key]
	if s == nil {
		s = &server{listening: make(chan struct{}), served: make(chan struct{})}
		k.servers[key] = s
	}
	return s
}

// chainDir is one node's chain markers of one burst buffer (agentapi.Chain): which runs
// started and which ended. changed is closed (and replaced) on every new marker.
type chainDir struct {
	markers map[string]bool
	changed chan struct{}
}

func chainKey(node, dir string) string { return node + "\x00" + dir }

func (k *Kubelet) chain(node, dir string) *chainDir {
	c := k.chains[chainKey(node, dir)]
	if c == nil {
		c = &chainDir{markers: map[string]bool{}, changed: make(chan struct{})}
		k.chains[chainKey(node, dir)] = c
	}
	return c
}

func (k *Kubelet) mark(node, dir, name, kind string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	c := k.chain(node, dir)
	c.markers[name+"."+kind] = true
	close(c.changed)
	c.changed = make(chan struct{})
}

// await waits until every name has its marker of kind, ctx ends or limit passes (0: no
// limit); it returns the names still missing.
func (k *Kubelet) await(ctx context.Context, node, dir string, names []string, kind string, limit time.Duration) []string {
	var timeout <-chan time.Time
	if limit > 0 {
		t := time.NewTimer(k.scaled(limit))
		defer t.Stop()
		timeout = t.C
	}
	for {
		k.mu.Lock()
		c := k.chain(node, dir)
		var missing []string
		for _, n := range names {
			if !c.markers[n+"."+kind] {
				missing = append(missing, n)
			}
		}
		changed := c.changed
		k.mu.Unlock()
		if len(missing) == 0 {
			return nil
		}
		select {
		case <-changed:
		case <-timeout:
			return missing
		case <-ctx.Done():
			return missing
		}
	}
}

// dropChains forgets a burst buffer's chains on node (its 'dir remove' removes them), and
// its network probe's server there.
func (k *Kubelet) dropChains(node, chainDir, server string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.servers, server)
	for key := range k.chains {
		n, dir, _ := cut(key)
		if n == node && (dir == chainDir || path.Dir(dir) == chainDir) {
			delete(k.chains, key)
		}
	}
}

func cut(key string) (string, string, bool) {
	for i := 0; i < len(key); i++ {
		if key[i] == 0 {
			return key[:i], key[i+1:], true
		}
	}
	return key, "", false
}

func (k *Kubelet) scaled(d time.Duration) time.Duration {
	if k.Speed <= 0 || k.Speed == 1 {
		return d
	}
	return time.Duration(float64(d) / k.Speed)
}

// sleep waits d (scaled); false when ctx ended first.
func (k *Kubelet) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(k.scaled(d))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (k *Kubelet) sleepErr(ctx context.Context, d time.Duration) error {
	if !k.sleep(ctx, d) {
		return ctx.Err()
	}
	return nil
}
