package controllers

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/apibridge"
	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/conditions"
	"github.com/beeburst/beeburst/internal/limits"
	"github.com/beeburst/beeburst/internal/nodecache"
	"github.com/beeburst/beeburst/internal/nodetask"
	"github.com/beeburst/beeburst/internal/parallel"
)

// reconcileDeviceProbes is stage 2's first step: each node's device measured on its own (fio,
// direct I/O) beside its documented figure, results reused from recent probes of the same
// node and path. One measurement per node at a time, within a burst buffer too: the network
// probe's iperf3 and the device probe's fio on the same node share its CPUs, and on a busy or
// emulated node (the testbed's QEMU guests) each measured a fraction of its component. So the
// links are measured after every device probe ended.
func (r *BurstBufferReconciler) reconcileDeviceProbes(ctx context.Context, s *scope) (ctrl.Result, bool, error) {
	bb := s.bb
	if componentsMeasured(bb) {
		return ctrl.Result{}, true, nil
	}
	s.stage2 = stage2{figures: map[string]nodecache.Figures{}, reused: map[string]bool{}}
	if deviceProbeRound(bb) == 1 {
		if err := r.startChain(ctx, s); err != nil {
			return ctrl.Result{}, false, err
		}
	}
	var pending, failures []string
	var ended []endedProbe
	for i, node := range s.nodes {
		st, failure, e, err := r.deviceFigures(ctx, s, i, node)
		switch {
		case err != nil:
			return ctrl.Result{}, false, err
		case failure != "":
			failures = append(failures, "device probe on "+failure)
		case st == nodetask.Running:
			pending = append(pending, node)
		case e != nil:
			ended = append(ended, *e)
		}
	}
	if err := r.keepProbeFigures(ctx, s, ended); err != nil {
		return ctrl.Result{}, false, err
	}
	if recordDiscovered(bb, s.stage2.figures) {
		// Stage 1 is recomputed as soon as discovery brings a figure nothing documented.
		estimate(s)
	}
	if len(failures) > 0 {
		conditions.Set(bb, v1alpha1.ConditionComponentsMeasured, metav1.ConditionFalse, v1alpha1.ReasonProbeFailed,
			strings.Join(failures, "; "))
		return ctrl.Result{}, false, nil
	}
	if len(pending) > 0 {
		reason, msg := v1alpha1.ReasonProbing, "probing"
		if deviceProbeRound(bb) > 1 {
			reason, msg = v1alpha1.ReasonRemeasuring, "the first round of the devices read low against the sweep, their documented figures or their nodes' earlier probes, or high against their documented figures, so they are measured again (a disturbed probe reads low, caching reads high)"
		}
		conditions.Set(bb, v1alpha1.ConditionComponentsMeasured, metav1.ConditionFalse, reason,
			fmt.Sprintf("%s: devices of %d of %d node(s) measured; the links next", msg, len(s.nodes)-len(pending), len(s.nodes)))
		return ctrl.Result{}, false, nil
	}
	return ctrl.Result{}, true, nil
}

// deviceProbeRound is the round of stage 2's device probes: 1, or 2 once a sweep figure was above
// their limit, or they read far below their documented figures (componentSecondLook).
func deviceProbeRound(bb *v1alpha1.BurstBuffer) int {
	if l := bb.Status.Limits; l != nil && l.Components != nil && l.Components.DeviceProbeRound > 1 {
		return int(l.Components.DeviceProbeRound)
	}
	return 1
}

// deviceFigures puts node i's device figures into s.stage2: fresh ones from the per-node
// cache, else its probe's once it ended - those come back as an endedProbe, whose conditions
// keepProbeFigures decides for all nodes at once. failure says why a probe gave none. A
// second round never reuses: the cache may hold the very figure in doubt.
func (r *BurstBufferReconciler) deviceFigures(ctx context.Context, s *scope, i int, node string) (nodetask.State, string, *endedProbe, error) {
	bb, run := s.bb, &s.stage2
	linkAddress := linkDiscoveryAddress(bb, s.nodeObj(node))
	round := deviceProbeRound(bb)
	if f, ok := r.reusableFigures(ctx, s, node); ok && round == 1 {
		// Figures this burst buffer measured itself on an earlier visit are its own, not
		// reused. Reused ones say what was free when they were taken; what the engine found
		// free when it prepared this burst buffer's node is what is free for it.
		run.figures[node], run.reused[node] = f, f.MeasuredBy != bb.Namespace+"/"+bb.Name
		if free := s.preparedFree[node]; free > 0 && run.reused[node] {
			f.FreeBytes = free
			run.figures[node] = f
		}
		return nodetask.Succeeded, "", nil, nil
	}
	st, msg, pod, err := r.runMeasuring(ctx, s, nodetask.DeviceProbePod(bb, r.AgentImage, i, node, linkAddress, round))
	if err != nil || st != nodetask.Succeeded {
		if st == nodetask.Failed {
			return st, fmt.Sprintf("node %s: %s", node, reportMessage(msg)), nil, err
		}
		return st, "", nil, err
	}
	e, err := probeFigures(msg)
	if err != nil {
		return st, fmt.Sprintf("node %s: %v", node, err), nil, nil
	}
	f := &e.figures
	f.Node, f.StoragePath, f.MeasuredBy, f.Method = node, bb.Spec.Storage.Path, bb.Namespace+"/"+bb.Name, nodetask.DeviceProbeMethod(bb)
	if obj := s.nodeObj(node); obj != nil {
		f.NodeUID = string(obj.UID)
	}
	e.pod = pod
	return st, "", &e, nil
}

// endedProbe is a device probe that ended with figures, before its conditions are decided.
type endedProbe struct {
	pod     *corev1.Pod
	figures nodecache.Figures
	// otherTraffic: what the node's device moved beside the probe that it did not ("": none).
	otherTraffic string
	// sawDevice: the probe counted the bytes on the block device below its directory (none
	// below btrfs, ZFS or overlay), so otherTraffic can say what it moved.
	sawDevice bool
}

// keepProbeFigures decides each ended probe's conditions (recorded on its pod the first
// time, and the figures cached when the probe had its node to itself) and puts its figures
// into s.stage2. Every node's pod and cache entry are their own objects: the writes are sent
// together, not one round trip per node.
func (r *BurstBufferReconciler) keepProbeFigures(ctx context.Context, s *scope, ended []endedProbe) error {
	conds := make([]*nodecache.Conditions, len(ended))
	if err := parallel.Do(len(ended), func(i int) (err error) {
		conds[i], err = r.probeConditions(ctx, s, ended[i])
		return err
	}); err != nil {
		return err
	}
	for i, e := range ended {
		e.figures.Conditions = conds[i]
		s.stage2.figures[e.figures.Node] = e.figures
	}
	return nil
}

// reusableFigures are node's device figures from the per-node cache when they are fresh (no
// older than validation.reuseComponentResultsFor, for the same storage path) at the start of
// this validation (reuseAsOf), of this Node object and probed the way this burst buffer
// would probe. A result whose probe did not read the link this burst buffer
// needs is not reused: the probe runs again.
func (r *BurstBufferReconciler) reusableFigures(ctx context.Context, s *scope, node string) (nodecache.Figures, bool) {
	bb := s.bb
	linkAddress := linkDiscoveryAddress(bb, s.nodeObj(node))
	f, ok := r.cachedFigures(ctx, node, s.nodeObj(node))
	// Fresh at reuseAsOf: younger than the window then, which is the window stretched by the
	// time since (and a figure measured since, this burst buffer's own too, is young enough).
	now := r.Now()
	if !ok || !f.Fresh(bb.Spec.Storage.Path, reuseMaxAge(bb)+max(0, now.Sub(r.reuseAsOf(bb))), now) ||
		f.Method != nodetask.DeviceProbeMethod(bb) ||
		linkAddress != "" && (f.Hardware == nil || f.Hardware.LinkAddress != linkAddress) {
		return nodecache.Figures{}, false
	}
	return f, true
}

// cachedFigures is node's entry in the per-node cache when it is of this node: an entry
// written for another Node object of the same name (the machine was replaced and registered
// again) is not. obj nil (the Node is gone), or an entry that names no Node object (written
// by an operator before entries did): nothing to compare.
func (r *BurstBufferReconciler) cachedFigures(ctx context.Context, node string, obj *corev1.Node) (nodecache.Figures, bool) {
	f, ok := r.nodeCache().Get(ctx, node)
	if !ok || obj != nil && f.NodeUID != "" && f.NodeUID != string(obj.UID) {
		return nodecache.Figures{}, false
	}
	return f, true
}

// reuseAsOf is the instant cached device figures must be fresh at: the start of bb's
// validation once it started, else now. Judged on every visit against now, a figure that
// expired while stage 2 measured the links would send a device probe, outside the quick
// profile's chain, beside this burst buffer's own link probes - a figure taken on a busy
// node that its own pods do not mark as disturbed.
func (r *BurstBufferReconciler) reuseAsOf(bb *v1alpha1.BurstBuffer) time.Time {
	if start := bb.Status.ValidationStartTime; start != nil {
		return start.Time
	}
	return r.Now()
}

// reuseMaxAge is validation.reuseComponentResultsFor: how old reused device figures may be.
func reuseMaxAge(bb *v1alpha1.BurstBuffer) time.Duration {
	if reuse := bb.Spec.Validation.ReuseComponentResultsFor; reuse != "" {
		if d, err := reuse.Parse(); err == nil {
			return d
		}
	}
	return time.Hour
}

// recordDiscovered writes what the device probes discovered into status.nodes[].hardware and
// says whether anything changed.
func recordDiscovered(bb *v1alpha1.BurstBuffer, figures map[string]nodecache.Figures) bool {
	changed := false
	for i := range bb.Status.Nodes {
		ns := &bb.Status.Nodes[i]
		f, ok := figures[ns.Name]
		if !ok {
			continue
		}
		nh := &v1alpha1.NodeHardware{}
		if ns.Hardware != nil {
			nh = ns.Hardware.DeepCopy()
		}
		apibridge.ApplyDiscovered(nh, f.Hardware)
		if !equality.Semantic.DeepEqual(nh, ns.Hardware) {
			ns.Hardware, changed = nh, true
		}
	}
	return changed
}

// probeFigures reads a device probe's report from its termination message: its figures, and
// what its device's counters say (endedProbe, without its pod).
func probeFigures(msg string) (endedProbe, error) {
	rep, err := readReport(msg)
	if err != nil {
		return endedProbe{}, fmt.Errorf("unreadable probe report: %v", err)
	}
	if rep.Phase != bench.PhaseSucceeded {
		return endedProbe{}, fmt.Errorf("probe %s: %s", rep.Phase, rep.Message)
	}
	f := nodecache.Figures{MeasuredTime: rep.EndTime, Hardware: rep.Hardware}
	if rep.FreeBytes != nil {
		f.FreeBytes = *rep.FreeBytes
	}
	var write, read bench.Result
	for _, res := range rep.Results {
		switch res.Operation {
		case bench.OpWrite:
			f.DeviceWriteBytesPerSecond, write = int64(res.BytesPerSecond), res
		case bench.OpRead:
			f.DeviceReadBytesPerSecond, read = int64(res.BytesPerSecond), res
		}
	}
	if f.DeviceWriteBytesPerSecond <= 0 || f.DeviceReadBytesPerSecond <= 0 {
		return endedProbe{}, fmt.Errorf("probe report has no write and read figures")
	}
	e := endedProbe{figures: f, sawDevice: write.Device != "" && write.Device == read.Device}
	if e.sawDevice {
		// Both phases together, as a sweep run's: writes the page cache still held when the
		// write phase ended reach the device during the read phase.
		e.otherTraffic = limits.ForeignTraffic(write.Device, float64(write.DeviceBytes+read.DeviceBytes), float64(write.Bytes+read.Bytes))
	}
	return e, nil
}
