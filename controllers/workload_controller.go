package controllers

import (
	"context"
	"errors"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/workload"
)

// WorkloadReconciler runs a job on a burst buffer: it holds the workload's gated pods until
// the burst buffer is Ready, then writes the job's environment ConfigMap, pins the pods to the
// burst buffer's nodes and lifts their gate, and keeps status.workload up to date.
//
// It reconciles BurstBuffers (status.workload is per burst buffer) and watches workload pods,
// mapped to their burst buffer by the beeburst.io/burst-buffer label. It writes only
// status.workload, with a merge patch of that field, so it never clobbers what the
// BurstBuffer reconciler writes.
type WorkloadReconciler struct {
	client.Client
	// APIReader reads the burst buffer past the cache before a gate is lifted (release);
	// the manager's when nil.
	APIReader client.Reader
	Recorder  events.EventRecorder
}

// +kubebuilder:rbac:groups=beeburst.io,resources=burstbuffers,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=beeburst.io,resources=burstbuffers/status,verbs=get;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

func (r *WorkloadReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	bb := &v1alpha1.BurstBuffer{}
	if err := r.Get(ctx, req.NamespacedName, bb); err != nil {
		// A pod naming a burst buffer that does not exist stays gated: nothing to do.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if bb.Undecodable() != "" {
		// Its spec is empty in memory: no decision may be taken on it (the BurstBuffer
		// reconciler reports it); its pods stay gated.
		return ctrl.Result{}, nil
	}
	sel, err := workload.Selector(bb)
	if err != nil {
		// CRD validation accepts any LabelSelector shape; a bad operator or value cannot be
		// fixed by retrying.
		return ctrl.Result{}, reconcile.TerminalError(err)
	}
	var labelled corev1.PodList
	if err := r.List(ctx, &labelled, client.InNamespace(bb.Namespace), ofBurstBuffer(bb)); err != nil {
		return ctrl.Result{}, err
	}
	// The selector's pods, and those it released though a selector narrowed since no longer
	// matches them (workload.Counts): they may still use its directory.
	var pods corev1.PodList
	for i := range labelled.Items {
		if workload.Counts(&labelled.Items[i], sel, bb.UID) {
			pods.Items = append(pods.Items, labelled.Items[i])
		}
	}

	var errs []error
	if ready(bb) {
		errs = append(errs, r.release(ctx, bb, pods.Items))
	}
	errs = append(errs, r.patchStatus(ctx, bb, pods.Items))
	res, err := r.teardown(ctx, bb, pods.Items)
	errs = append(errs, err)
	return res, errors.Join(errs...)
}

// teardown starts teardown when the policy says so, by deleting the BurstBuffer: its
// finalizer stages out first and keeps everything if that fails. A TTL is a clock: wake up
// when it runs out.
func (r *WorkloadReconciler) teardown(ctx context.Context, bb *v1alpha1.BurstBuffer, pods []corev1.Pod) (ctrl.Result, error) {
	if !bb.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	d := workload.Teardown(bb, workload.Status(pods), time.Now())
	if !d.Due {
		if d.At != nil {
			return ctrl.Result{RequeueAfter: time.Until(d.At.Time)}, nil
		}
		return ctrl.Result{}, nil
	}
	if r.Recorder != nil {
		r.Recorder.Eventf(bb, nil, corev1.EventTypeNormal, "TeardownStarted", "Teardown", "%s", d.Reason)
	}
	return ctrl.Result{}, client.IgnoreNotFound(r.Delete(ctx, bb))
}

// ready: the gate may be lifted. A burst buffer being deleted is not: its data is about to
// go, and a pod started now would find an empty directory.
func ready(bb *v1alpha1.BurstBuffer) bool {
	return bb.DeletionTimestamp.IsZero() && len(bb.Status.Nodes) > 0 &&
		conditionIs(bb, v1alpha1.ConditionReady, metav1.ConditionTrue)
}

// release writes the environment ConfigMap, then lifts the gate of every gated pod. The
// ConfigMap comes first: a container's envFrom is resolved when the kubelet starts it, which
// is after the gate is gone, so a released pod always finds it. pods is updated in place so
// the status written afterwards no longer lists released pods.
func (r *WorkloadReconciler) release(ctx context.Context, bb *v1alpha1.BurstBuffer, pods []corev1.Pod) error {
	if err := r.applyEnv(ctx, bb); err != nil {
		return err
	}
	var hosts []string
	var errs []error
	fresh := false
	for i := range pods {
		pod := &pods[i]
		// A held pod's burst buffer is being deleted, whatever the cache still says of it.
		if !workload.IsGated(pod) || workload.IsHeld(pod, bb.UID) || !pod.DeletionTimestamp.IsZero() {
			continue
		}
		if !fresh {
			// The cached burst buffer may not show a deletion that happened since; the pods
			// were listed before this read, so a deletion after it finds them and holds
			// their gates first (BurstBufferReconciler.holdGates).
			var cur v1alpha1.BurstBuffer
			if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(bb), &cur); err != nil {
				return client.IgnoreNotFound(err)
			}
			if cur.UID != bb.UID || !ready(&cur) {
				return nil
			}
			fresh = true
		}
		if hosts == nil {
			hosts = r.hostnames(ctx, bb)
		}
		released := workload.Release(pod, hosts, bb.UID)
		// The optimistic lock makes the merge patch safe: it replaces whole lists (gates,
		// node selector terms) computed from what we read. A conflict means the pod changed
		// under us; its update event brings us back with the new version.
		err := r.Patch(ctx, released, client.MergeFromWithOptions(pod, client.MergeFromWithOptimisticLock{}))
		switch {
		case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
			continue
		case err != nil:
			if (apierrors.IsForbidden(err) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err)) && r.Recorder != nil {
				// An admission policy on pods, say: retrying the same patch cannot pass, and
				// the pod would wait at the gate with nothing but the manager's log saying why.
				r.Recorder.Eventf(pod, bb, corev1.EventTypeWarning, "ReleaseRefused", "Release",
					"burst buffer %s is Ready, but the API server refused to lift this pod's scheduling gate %s (with its placement on the burst buffer's nodes and annotation %s): %v",
					bb.Name, v1alpha1.SchedulingGate, v1alpha1.AnnotationReleasedBy, err)
			}
			errs = append(errs, err)
			continue
		}
		logf.FromContext(ctx).Info("released workload pod", "pod", pod.Name, "nodes", hosts)
		if r.Recorder != nil {
			r.Recorder.Eventf(released, bb, corev1.EventTypeNormal, "BurstBufferReady", "Release",
				"burst buffer %s is Ready: scheduling gate %s lifted, placed on %s",
				bb.Name, v1alpha1.SchedulingGate, strings.Join(hosts, ","))
		}
		*pod = *released
	}
	return errors.Join(errs...)
}

// applyEnv server-side applies the environment ConfigMap when it differs from the cached one
// (the BurstBuffer changes often while it measures; most visits need no write).
func (r *WorkloadReconciler) applyEnv(ctx context.Context, bb *v1alpha1.BurstBuffer) error {
	want := workload.EnvConfigMap(bb)
	var cur corev1.ConfigMap
	err := r.Get(ctx, client.ObjectKey{Namespace: bb.Namespace, Name: *want.Name}, &cur)
	if err == nil && equality.Semantic.DeepEqual(cur.Data, want.Data) && metav1.IsControlledBy(&cur, bb) {
		return nil
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return r.Apply(ctx, want, client.FieldOwner(FieldOwner), client.ForceOwnership)
}

// hostnames are the kubernetes.io/hostname labels of the burst buffer's nodes, which the
// kubelet sets; the node name stands in for a node without one (or not found).
func (r *WorkloadReconciler) hostnames(ctx context.Context, bb *v1alpha1.BurstBuffer) []string {
	hosts := make([]string, 0, len(bb.Status.Nodes))
	for _, n := range bb.Status.Nodes {
		var node corev1.Node
		if err := r.Get(ctx, client.ObjectKey{Name: n.Name}, &node); err == nil && node.Labels[corev1.LabelHostname] != "" {
			hosts = append(hosts, node.Labels[corev1.LabelHostname])
			continue
		}
		hosts = append(hosts, n.Name)
	}
	return hosts
}

// patchStatus writes status.workload alone. teardownTime/teardownReason are derived here only
// for policy AfterTTL (Ready + ttl); for the other policies whatever is there is kept, as the
// teardown logic owns them.
func (r *WorkloadReconciler) patchStatus(ctx context.Context, bb *v1alpha1.BurstBuffer, pods []corev1.Pod) error {
	st := workload.Status(pods)
	if bb.DeletionTimestamp.IsZero() {
		d := workload.Teardown(bb, st, time.Now())
		st.TeardownTime, st.TeardownReason = d.At, d.Reason
	} else if old := bb.Status.Workload; old != nil {
		st.TeardownTime, st.TeardownReason = old.TeardownTime, old.TeardownReason
	}
	var want *v1alpha1.WorkloadStatus
	if !equality.Semantic.DeepEqual(st, v1alpha1.WorkloadStatus{}) {
		want = &st
	}
	if equality.Semantic.DeepEqual(bb.Status.Workload, want) {
		return nil
	}
	before := bb.DeepCopy()
	bb.Status.Workload = want
	return client.IgnoreNotFound(r.Status().Patch(ctx, bb, client.MergeFrom(before)))
}

// SetupWithManager watches BurstBuffers (Ready, nodes, limits), their environment ConfigMaps
// (recreated if deleted) and workload pods. The pod cache holds only pods with the
// beeburst.io/burst-buffer label (CacheOptions), which every workload pod must carry.
func (r *WorkloadReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	if err := indexPodsByBurstBuffer(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.BurstBuffer{}).
		Owns(&corev1.ConfigMap{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(burstBufferOfPod),
			builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
				pod, ok := o.(*corev1.Pod)
				return ok && workload.IsWorkloadPod(pod)
			}))).
		Named("workload").
		Complete(r)
}

func burstBufferOfPod(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[v1alpha1.LabelBurstBuffer]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: name}}}
}
