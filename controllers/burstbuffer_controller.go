// Package controllers holds the reconcilers. They are thin: each phase is a small method that
// calls into internal/ and sets its own condition.
package controllers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/apitrace"
	"github.com/beeburst/beeburst/internal/conditions"
	"github.com/beeburst/beeburst/internal/engine"
	"github.com/beeburst/beeburst/internal/engine/beegfs"
	"github.com/beeburst/beeburst/internal/engine/local"
	"github.com/beeburst/beeburst/internal/limits"
	"github.com/beeburst/beeburst/internal/liveowner"
	"github.com/beeburst/beeburst/internal/nodetask"
	"github.com/beeburst/beeburst/internal/shorten"
	"github.com/beeburst/beeburst/internal/speccheck"
	"github.com/beeburst/beeburst/internal/workload"
)

// FieldOwner is the operator's field manager name.
const FieldOwner = "beeburst-operator"

// BurstBufferReconciler reconciles BurstBuffers.
type BurstBufferReconciler struct {
	client.Client
	Recorder events.EventRecorder
	// AgentImage runs node tasks (directories, probes, benchmarks).
	AgentImage string
	// CacheNamespace holds the per-node stage-2 figures reused across burst buffers (the
	// operator's own namespace).
	CacheNamespace string
	// Engines by name; nil entries are filled with the built-in engines by SetupWithManager.
	Engines map[v1alpha1.EngineType]engine.Engine
	// Now is the clock (tests may replace it).
	Now func() time.Time
	// PodLogTail returns the last lines of a pod's log (the progress of a running copy; the
	// beegfs engine's management service). Set from the manager's config by SetupWithManager
	// when nil.
	PodLogTail func(ctx context.Context, namespace, name string, lines int64) (string, error)
	// APIReader reads past the cache: whether a user's Secret (an object store's credentials)
	// exists, the kubelet's events about a pod that does not start, and whether a burst
	// buffer is still there before a child is created where no owner reference reaches
	// (internal/liveowner). Set to the manager's by SetupWithManager when nil.
	APIReader client.Reader
	// StorageRoots are the directories below which spec.storage.path may lie (the manager's
	// --allowed-storage-roots). Nil: speccheck.DefaultRoots; empty: none.
	StorageRoots speccheck.Roots
	// TeardownTimeout bounds each wait of a deletion on a node (teardown.go); 0: 2 minutes.
	TeardownTimeout time.Duration
	// StorageClass is the class of the claims and volumes through which pods use burst
	// buffers (the manager's --storage-class); empty: claim.DefaultStorageClass.
	StorageClass string
	// UnschedulableTimeout is how long a copy pod may stay unschedulable before the stage
	// reports it (CopyUnschedulable); 0: 1 minute.
	UnschedulableTimeout time.Duration
	// SchedulerGrace is how long after a deletion a workload pod whose gate was lifted just
	// before, and that the scheduler has not placed yet, holds it (workload.SchedulerDecides
	// when zero).
	SchedulerGrace time.Duration
	// PodSetupMargin is how long before a sweep run another burst buffer's pod may have
	// ended, or after it started, and still count as beside it (its sandbox's teardown or
	// setup); 0: a second (secondlook.go); negative: only pods whose containers ran during it.
	PodSetupMargin time.Duration
	// MaxConcurrentReconciles is how many burst buffers are visited at once; 0:
	// defaultConcurrentReconciles.
	MaxConcurrentReconciles int
	// SlowVisit: a visit that takes longer is logged with the API requests it made, grouped
	// and timed (internal/apitrace; the manager's transport must record them, as its
	// --slow-visit-log wraps it). 0: none is.
	SlowVisit time.Duration

	// stale skips visits that read a burst buffer older than this manager's last write.
	stale staleGuard
	// podEvents holds the warnings about pods that wait to start, per namespace (podstart.go).
	podEvents podEvents
	// shifts lets one visit at a time choose a BeeGFS port shift (needsPortShift); the
	// others come back after shiftRecheck.
	shifts sync.Mutex
}

// defaultConcurrentReconciles: a visit mostly waits for the API server (it creates a burst
// buffer's pods, takes its nodes' locks), so several at once keep up with many burst buffers
// where one alone lets the queue of visits grow to minutes (make bench-scale); many more
// only crowd the API server (16 took more visits and writes per burst buffer to Ready:
// docs/architecture.md, "The control plane at scale"). Visits
// of different burst buffers meet only at the node locks and the per-node figure cache,
// which are written with optimistic concurrency, and at the port shifts (needsPortShift).
const defaultConcurrentReconciles = 4

// scope is what the phases of one visit share.
type scope struct {
	bb     *v1alpha1.BurstBuffer
	engine engine.Engine
	// nodes are the names of the burst buffer's nodes, from status (set once).
	nodes []string
	// nodeObjs are the Node objects, for discovery of documented figures.
	nodeObjs []corev1.Node
	// nodesUnsaved: this visit chose the nodes; nothing is made for them until its status
	// patch has saved them (reconcileNodes).
	nodesUnsaved bool
	// gone are the nodes whose Node object stage-out found deleted: no copy is made there.
	gone map[string]bool
	// locks are the node measuring locks as this visit found them.
	locks nodeLocks
	// measuring: stages 2-4 measure on this visit (reconcileValidationGate).
	measuring bool
	// lastLook: the time budget ran out; this visit reads the measuring pods that ended
	// (and publishes them) but starts none, then cuts validation short where a step is not
	// done (reconcileValidationGate, measuring).
	lastLook bool
	// preparedFree is the space free on each node when the engine prepared it
	// (engine.Result.FreeBytes): fresher than a device figure reused from another burst
	// buffer's probe, which says what was free then.
	preparedFree map[string]int64
	// stage2 is what stage 2's steps found on this visit, for the steps after them.
	stage2 stage2
	// sweepSummary is the ended sweep's line for the Validated condition.
	sweepSummary string
	// sweepPoints are the ended sweep's measured points, for the comparison (compare.go).
	sweepPoints []limits.Point
	// chain is the quick profile's chain of runs (chain.go), planned on the visit's first
	// pod creation.
	chain        []chained
	chainPlanned bool
	// podRecheck is when to look again at pods that wait to start (podstart.go): events
	// are not watched.
	podRecheck time.Duration
	// blocked are this visit's measuring pods that cannot start, by name (runMeasuring).
	blocked map[string]*nodetask.Blocked
}

// +kubebuilder:rbac:groups=beeburst.io,resources=burstbuffers,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=beeburst.io,resources=burstbuffers/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=beeburst.io,resources=burstbuffers/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=pods/log,verbs=get
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// Leader election records its events (core/v1) next to its Lease, in the operator's namespace.
// +kubebuilder:rbac:groups="",namespace=beeburst-system,resources=events,verbs=create;patch

// Reconcile has the house shape: get -> finalizer -> scope -> deferred status patch ->
// delete path or the phases in order.
func (r *BurstBufferReconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, reterr error) {
	defer func() { res.Priority = visitPriority }()
	log := logf.FromContext(ctx)
	ctx = liveowner.ForVisit(ctx)
	bb := &v1alpha1.BurstBuffer{}
	if r.SlowVisit > 0 {
		// Registered first, so that it runs last: the status patch below is part of the visit.
		var visit *apitrace.Visit
		ctx, visit = apitrace.Start(ctx)
		defer logIfSlow(ctx, visit, time.Now(), r.SlowVisit, bb)
	}
	if err := r.Get(ctx, req.NamespacedName, bb); err != nil {
		if apierrors.IsNotFound(err) {
			r.stale.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !bb.DeletionTimestamp.IsZero() && (!controllerutil.ContainsFinalizer(bb, v1alpha1.Finalizer) || r.stale.isFinished(bb.UID)) {
		// Teardown is over: the object read is the one whose finalizer the last visit removed
		// (the API server may show it once more before it is gone). A teardown run on it
		// again would start clean pods for nodes whose settling was never written. An older
		// copy, still with the finalizer, may come too: this manager remembers removing it.
		return ctrl.Result{}, nil
	}
	if r.stale.stale(req.NamespacedName, bb.ResourceVersion) {
		// The watch event of the last write brings the next visit; the requeue is a backstop.
		log.V(1).Info("skipping a visit to a burst buffer older than the last write", "resourceVersion", bb.ResourceVersion)
		return ctrl.Result{RequeueAfter: staleRecheck}, nil
	}
	passed := []string{bb.ResourceVersion}
	defer func() { r.stale.wrote(req.NamespacedName, bb.ResourceVersion, passed...) }()
	if bb.Undecodable() != "" {
		return ctrl.Result{}, r.refuseUndecodable(ctx, bb)
	}

	if needsPortShift(bb) {
		// The engine chooses the shift from the other burst buffers' status as the API server
		// has it: no other visit may choose one until this one's status patch (deferred below,
		// so it runs before the unlock) is written. A visit that finds the choice taken comes
		// back shortly instead of waiting: its worker serves other burst buffers meanwhile.
		if !r.shifts.TryLock() {
			log.V(1).Info("another visit is choosing a BeeGFS port shift: back shortly")
			return ctrl.Result{RequeueAfter: shiftRecheck}, nil
		}
		defer r.shifts.Unlock()
	}
	s, err := r.newScope(ctx, bb)
	if err != nil {
		return ctrl.Result{}, err
	}
	passed = append(passed, bb.ResourceVersion) // after the finalizer's patch, if any

	before := bb.DeepCopy()
	defer func() {
		r.summarise(s)
		bb.Status.Warnings = boundWarnings(bb.Status.Warnings)
		bb.Status.ObservedGeneration = bb.Generation
		// Most visits change nothing (a pod moved on, a lock is still held): an empty patch
		// would still be a round trip to the API server, so none is sent.
		if !equality.Semantic.DeepEqual(before.Status, bb.Status) {
			if err := r.Status().Patch(ctx, bb, client.MergeFrom(before)); err != nil && !apierrors.IsNotFound(err) {
				reterr = errors.Join(reterr, err)
				return
			}
		}
		r.emitTransitions(before, bb)
		logTransitions(ctx, before, bb)
	}()
	initConditions(bb)
	if bb.Status.TaskNamespace == "" && len(bb.Status.Nodes) == 0 && r.CacheNamespace != "" {
		// Recorded before anything runs on a node: where this burst buffer's host-level
		// children live for the rest of its life. (One with nodes and none recorded has its
		// children beside it, and keeps them there.)
		bb.Status.TaskNamespace = r.CacheNamespace
	}

	if !bb.DeletionTimestamp.IsZero() {
		res, err := r.reconcileDelete(ctx, s)
		return res, ownerGone(ctx, err)
	}

	for _, run := range r.pipeline() {
		res, done, err := run(ctx, s)
		if err != nil || !done {
			if err != nil && podSecurityRefused(bb, err) {
				// Not an error of the operator's: look again on a clock, not in a backoff
				// that grows to minutes while a person labels the namespace.
				return ctrl.Result{RequeueAfter: podSecurityRecheck}, nil
			}
			if err = ownerGone(ctx, err); err != nil {
				log.Error(err, "step failed")
			}
			res.RequeueAfter = minPositive(res.RequeueAfter, s.podRecheck)
			return res, err
		}
	}
	return ctrl.Result{}, nil
}

// ownerGone is err, or nil when err is a child's creation refused because the burst buffer
// is gone: the visit read a copy of it that the API server no longer has, and its removal
// brings no further visit to do.
func ownerGone(ctx context.Context, err error) error {
	if errors.Is(err, liveowner.ErrOwnerGone) {
		logf.FromContext(ctx).Info("the burst buffer is gone: nothing more to do", "refused", err.Error())
		return nil
	}
	return err
}

// pipeline is a visit to a live burst buffer, in order. Each step is idempotent and sets its
// own condition; the visit stops at the first that is not done, and the next visit (a watch
// event, or a clock) runs the list again from the top, each step that has nothing to do
// skipping itself. measuring(...) steps run only while validation measures (see
// reconcileValidationGate) and hold the nodes' measuring locks.
func (r *BurstBufferReconciler) pipeline() []step {
	return []step{
		// Never wait: the first Unknown of the conditions of chunkSizePolicy Auto and
		// compareWith, and their final word when validation ended before them (a budget cut).
		r.reconcileChunkSizeVerdict,             // chunkverdict.go
		r.reconcileComparisonVerdict,            // compareverdict.go
		r.reconcileAdmission,                    // admission.go: a spec the operator cannot use
		r.reconcileNodes,                        // phases.go, target.go: which nodes
		r.reconcileClaim,                        // claim.go: the workload's claim, unbound
		r.reconcileEstimate,                     // limits.go: stage 1, from the documented hardware
		r.reconcileEngine,                       // phases.go: the file system
		r.reconcileFreeSpace,                    // admission.go: capacityPerNode against the space free
		r.reconcileReuse,                        // reuse.go: a validation kept from the same configuration
		r.reconcileValidationGate,               // validation.go: profile, time budget, node locks
		r.measuring(r.reconcileDeviceProbes),    // deviceprobe.go: stage 2, devices
		r.measuring(r.reconcileNetwork),         // network.go: stage 2, links
		r.measuring(r.reconcileStorageBench),    // storagebench.go: stage 2, BeeGFS targets
		r.measuring(r.reconcileComponentLimits), // componentlimits.go: stage 2 published, its limits
		r.measuring(r.reconcileChunkSize),       // chunks.go: layout.chunkSizePolicy Auto, before the sweep
		r.measuring(r.reconcileSweep),           // sweep.go: stages 3 and 4
		r.measuring(r.reconcileWorkloads),       // workloads.go: software factors (standard profile)
		r.measuring(r.reconcileComparison),      // compare.go: validation.compareWith, side by side
		r.reconcileValidationDone,               // validation.go: Validated, locks released
		r.reconcileTarget,                       // target.go: the verdict on spec.target after stage 3
		r.reconcileStageIn,                      // staging.go: data copied in before the job
		r.reconcileVolume,                       // claim.go: Ready - the claim's volume, bound
	}
}

// newScope puts the finalizer on (before the first side effect on a node) and gathers what
// every step reads: the object, its engine and its nodes.
func (r *BurstBufferReconciler) newScope(ctx context.Context, bb *v1alpha1.BurstBuffer) (*scope, error) {
	if bb.DeletionTimestamp.IsZero() && !controllerutil.ContainsFinalizer(bb, v1alpha1.Finalizer) {
		orig := bb.DeepCopy()
		controllerutil.AddFinalizer(bb, v1alpha1.Finalizer)
		if err := r.Patch(ctx, bb, client.MergeFrom(orig)); err != nil {
			return nil, err
		}
	}
	eng, ok := r.Engines[bb.Spec.Engine]
	if !ok {
		// CRD validation makes this unreachable; a newer CRD with an older operator is not.
		return nil, reconcile.TerminalError(fmt.Errorf("unknown engine %q", bb.Spec.Engine))
	}
	s := &scope{bb: bb, engine: eng}
	for _, n := range bb.Status.Nodes {
		s.nodes = append(s.nodes, n.Name)
	}
	return s, nil
}

// shiftRecheck is when a visit that found another choosing a port shift comes back: about
// one visit's time (the choice ends with that visit's status patch).
const shiftRecheck = 200 * time.Millisecond

// needsPortShift: a beegfs burst buffer whose engine has not chosen its port shift yet
// (beegfs.Engine chooses it while status.beegfs has no management address).
func needsPortShift(bb *v1alpha1.BurstBuffer) bool {
	return bb.Spec.Engine == v1alpha1.EngineBeeGFS && bb.DeletionTimestamp.IsZero() &&
		(bb.Status.BeeGFS == nil || bb.Status.BeeGFS.ManagementAddress == "")
}

// podSecurityRefused says on the Provisioned condition when the API server refused one of the
// operator's pods for the Pod Security level of its namespace: nothing of the burst buffer
// can run until a person labels the namespace, and only the manager's log would say so.
func podSecurityRefused(bb *v1alpha1.BurstBuffer, err error) bool {
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "violates PodSecurity") {
		return false
	}
	ns := nodetask.Namespace(bb)
	conditions.Set(bb, v1alpha1.ConditionProvisioned, metav1.ConditionFalse, v1alpha1.ReasonPodSecurityRefused,
		fmt.Sprintf("the API server refused a pod of this burst buffer in namespace %s for its Pod Security level: %s. The operator's host-level pods need privileged: kubectl label namespace %s pod-security.kubernetes.io/enforce=privileged --overwrite (the operator retries by itself)",
			ns, shorten.FirstLine(err.Error(), messageMax), ns))
	return true
}

// podSecurityRecheck is how often a burst buffer whose pods the namespace refuses tries again.
const podSecurityRecheck = 15 * time.Second

// step is one step of the pipeline: done says whether the next may run on this visit.
type step func(context.Context, *scope) (ctrl.Result, bool, error)

// SetupWithManager wires watches: BurstBuffers, their task pods, Nodes (a burst buffer
// waiting for nodes retries when a node appears or becomes Ready) and workload pods (a
// burst buffer choosing its nodes from its workload retries when one appears or changes).
func (r *BurstBufferReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	// Every child this manager creates outside its burst buffer's namespace is created only
	// while the burst buffer is there, read live (internal/liveowner).
	r.Client = liveowner.Wrap(r.Client, r.APIReader)
	if r.Engines == nil {
		r.Engines = map[v1alpha1.EngineType]engine.Engine{}
	}
	if r.Engines[v1alpha1.EngineLocal] == nil {
		r.Engines[v1alpha1.EngineLocal] = &local.Engine{Client: r.Client, AgentImage: r.AgentImage, TaskNamespace: r.CacheNamespace}
	}
	if r.Engines[v1alpha1.EngineBeeGFS] == nil {
		// Reader reads other BurstBuffers from the API server, not the cache, when a port shift
		// is allocated: two burst buffers must not pick the same shift from a stale cache.
		r.Engines[v1alpha1.EngineBeeGFS] = beegfs.Engine{
			Client: r.Client, Reader: r.APIReader, AgentImage: r.AgentImage, TaskNamespace: r.CacheNamespace,
			// mgmtd's log, where alone a licence limit's refusal of servers shows (PodLogTail
			// is set below).
			Logs: func(ctx context.Context, ns, name string, lines int64) (string, error) {
				return r.PodLogTail(ctx, ns, name, lines)
			},
		}
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	if r.StorageRoots == nil {
		roots, err := speccheck.ParseRoots(speccheck.DefaultRoots)
		if err != nil {
			return err
		}
		r.StorageRoots = roots
	}
	if err := indexFields(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return err
	}
	if r.PodLogTail == nil {
		cs, err := kubernetes.NewForConfig(mgr.GetConfig())
		if err != nil {
			return err
		}
		r.PodLogTail = func(ctx context.Context, ns, name string, lines int64) (string, error) {
			b, err := cs.CoreV1().Pods(ns).GetLogs(name, &corev1.PodLogOptions{TailLines: &lines}).DoRaw(ctx)
			return string(b), err
		}
	}
	if r.MaxConcurrentReconciles <= 0 {
		r.MaxConcurrentReconciles = defaultConcurrentReconciles
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.BurstBuffer{}).
		Watches(&v1alpha1.BurstBuffer{}, arrivalsFirst).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles}).
		// The operator's pods: most run in its own namespace, where no owner reference can
		// point at a burst buffer; their labels name it.
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(burstBufferOfChild),
			builder.WithPredicates(predicate.NewPredicateFuncs(isOurs))).
		Owns(&corev1.PersistentVolumeClaim{}).
		Watches(&corev1.PersistentVolumeClaim{}, handler.EnqueueRequestsFromMapFunc(r.burstBuffersOfClaim)).
		// A node lock that changes hands lets the next burst buffer on the node measure.
		Watches(&coordinationv1.Lease{}, handler.EnqueueRequestsFromMapFunc(r.burstBuffersWaitingForLock)).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.burstBuffersWaitingForNodes),
			builder.WithPredicates(predicate.Or(predicate.LabelChangedPredicate{}, nodeReadyChanged()))).
		// spec.nodes.fromWorkload waits for the workload's pods. Owns above sees only the
		// operator's own pods; workload pods carry the beeburst.io/burst-buffer label, so the
		// label-restricted pod cache (CacheOptions) holds them.
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.burstBufferWaitingForWorkload),
			builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
				pod, ok := o.(*corev1.Pod)
				return ok && workload.IsWorkloadPod(pod)
			}))).
		Named("burstbuffer").
		Complete(r)
}
