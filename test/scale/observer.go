package main

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/nodetask"
)

var bbResource = schema.GroupVersionResource{Group: v1alpha1.GroupVersion.Group, Version: v1alpha1.GroupVersion.Version, Resource: "burstbuffers"}

// bbTimes is one burst buffer's life as the harness saw it.
type bbTimes struct {
	created, ready, gone time.Time
	// visited: the manager's first status (a phase), with stage 1's estimate.
	visited time.Time
	deleted bool // deleted by the harness before it was Ready
	phase   string
	reason  string
}

// observer watches what the manager watches, with the manager's own selectors
// (controllers.CacheOptions), and counts the watch events: each of the manager's informers
// receives exactly these. It also follows the burst buffers' phases, and plays the garbage
// collector (kube-controller-manager's, which envtest does not run): a burst buffer's owned
// objects go when it is gone.
type observer struct {
	cs  kubernetes.Interface
	dyn dynamic.Interface

	mu     sync.Mutex
	bbs    map[types.NamespacedName]*bbTimes
	events map[string]*atomic.Int64
	// changed is closed and replaced whenever a burst buffer's phase or existence changes.
	changed   chan struct{}
	counting  atomic.Bool
	gcDeletes atomic.Int64
}

func newObserver(cs kubernetes.Interface, dyn dynamic.Interface) *observer {
	o := &observer{cs: cs, dyn: dyn, bbs: map[types.NamespacedName]*bbTimes{}, events: map[string]*atomic.Int64{}, changed: make(chan struct{})}
	for _, k := range []string{"BurstBuffer", "Pod", "Node", "Lease", "ConfigMap", "Secret", "PersistentVolumeClaim"} {
		o.events[k] = &atomic.Int64{}
	}
	return o
}

func (o *observer) counter(kind string) cache.ResourceEventHandler {
	c := o.events[kind]
	count := func() {
		if o.counting.Load() {
			c.Add(1)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { count() }, UpdateFunc: func(any, any) { count() }, DeleteFunc: func(any) { count() },
	}
}

// start runs the informers until ctx ends; it returns once they have synced, and counts
// events from then on.
func (o *observer) start(ctx context.Context) error {
	managed := nodetask.LabelManagedBy + "=" + nodetask.ManagedBy
	all := informers.NewSharedInformerFactory(o.cs, 0)
	withBB := informers.NewSharedInformerFactoryWithOptions(o.cs, 0, informers.WithTweakListOptions(func(l *metav1.ListOptions) {
		l.LabelSelector = v1alpha1.LabelBurstBuffer
	}))
	ours := informers.NewSharedInformerFactoryWithOptions(o.cs, 0, informers.WithTweakListOptions(func(l *metav1.ListOptions) {
		l.LabelSelector = managed
	}))
	locks := informers.NewSharedInformerFactoryWithOptions(o.cs, 0, informers.WithNamespace(operatorNamespace), informers.WithTweakListOptions(func(l *metav1.ListOptions) {
		l.LabelSelector = managed + "," + nodetask.LabelComponent + "=" + nodetask.ComponentNodeLock
	}))
	infs := map[string]cache.SharedIndexInformer{
		"Pod":                   withBB.Core().V1().Pods().Informer(),
		"Node":                  all.Core().V1().Nodes().Informer(),
		"PersistentVolumeClaim": all.Core().V1().PersistentVolumeClaims().Informer(),
		"ConfigMap":             ours.Core().V1().ConfigMaps().Informer(),
		"Secret":                ours.Core().V1().Secrets().Informer(),
		"Lease":                 locks.Coordination().V1().Leases().Informer(),
	}
	bbInf := cache.NewSharedIndexInformer(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, l metav1.ListOptions) (runtime.Object, error) {
			return o.dyn.Resource(bbResource).List(ctx, l)
		},
		WatchFuncWithContext: func(ctx context.Context, l metav1.ListOptions) (watch.Interface, error) {
			return o.dyn.Resource(bbResource).Watch(ctx, l)
		},
	}, nil, 0, cache.Indexers{})
	infs["BurstBuffer"] = bbInf
	for kind, inf := range infs {
		if _, err := inf.AddEventHandler(o.counter(kind)); err != nil {
			return err
		}
	}
	if _, err := bbInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { o.sawBB(obj, false) },
		UpdateFunc: func(_, obj any) { o.sawBB(obj, false) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			o.sawBB(obj, true)
			o.collect(ctx, obj)
		},
	}); err != nil {
		return err
	}
	for _, f := range []informers.SharedInformerFactory{all, withBB, ours, locks} {
		f.Start(ctx.Done())
	}
	go bbInf.Run(ctx.Done())
	var synced []cache.InformerSynced
	for _, inf := range infs {
		synced = append(synced, inf.HasSynced)
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return ctx.Err()
	}
	o.counting.Store(true)
	return nil
}

func (o *observer) sawBB(obj any, gone bool) {
	u, ok := obj.(interface {
		GetNamespace() string
		GetName() string
		UnstructuredContent() map[string]any
	})
	if !ok {
		return
	}
	key := types.NamespacedName{Namespace: u.GetNamespace(), Name: u.GetName()}
	phase, reason := "", ""
	if st, ok := u.UnstructuredContent()["status"].(map[string]any); ok {
		phase, _ = st["phase"].(string)
		if conds, ok := st["conditions"].([]any); ok {
			for _, c := range conds {
				if m, ok := c.(map[string]any); ok && m["type"] == v1alpha1.ConditionReady {
					reason, _ = m["reason"].(string)
				}
			}
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	t := o.bbs[key]
	if t == nil {
		return // not one of the harness's (or before it was recorded: recorded on create)
	}
	changed := t.phase != phase || gone
	t.phase, t.reason = phase, reason
	if phase != "" && t.visited.IsZero() {
		t.visited = time.Now()
	}
	if phase == string(v1alpha1.PhaseReady) && t.ready.IsZero() {
		t.ready = time.Now()
	}
	if gone && t.gone.IsZero() {
		t.gone = time.Now()
	}
	if changed {
		close(o.changed)
		o.changed = make(chan struct{})
	}
}

func (o *observer) created(key types.NamespacedName, at time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.bbs[key] = &bbTimes{created: at}
}

func (o *observer) markDeleted(key types.NamespacedName) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if t := o.bbs[key]; t != nil && t.ready.IsZero() {
		t.deleted = true
	}
}

// waitUntil waits until done (called under the lock with every burst buffer) says so, or ctx
// ends; false then.
func (o *observer) waitUntil(ctx context.Context, done func(map[types.NamespacedName]*bbTimes) bool) bool {
	for {
		o.mu.Lock()
		ok := done(o.bbs)
		ch := o.changed
		o.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-ch:
		case <-time.After(time.Second):
		case <-ctx.Done():
			return false
		}
	}
}

func (o *observer) snapshot() map[types.NamespacedName]bbTimes {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := map[types.NamespacedName]bbTimes{}
	for k, v := range o.bbs {
		out[k] = *v
	}
	return out
}

func (o *observer) eventCounts() map[string]int64 {
	out := map[string]int64{}
	for k, v := range o.events {
		out[k] = v.Load()
	}
	return out
}

// collect deletes what a gone burst buffer owned in its namespace, as the garbage collector
// does (background propagation): its pods, ConfigMaps, Secrets and claims.
func (o *observer) collect(ctx context.Context, obj any) {
	u, ok := obj.(interface {
		GetNamespace() string
		GetName() string
		GetUID() types.UID
	})
	if !ok {
		return
	}
	ns, uid := u.GetNamespace(), u.GetUID()
	sel := metav1.ListOptions{LabelSelector: v1alpha1.LabelBurstBuffer + "=" + u.GetName()}
	owned := func(m metav1.Object) bool {
		for _, r := range m.GetOwnerReferences() {
			if r.UID == uid {
				return true
			}
		}
		return false
	}
	del := func(err error) {
		if err == nil {
			o.gcDeletes.Add(1)
		}
	}
	go func() {
		opts := metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}
		if pods, err := o.cs.CoreV1().Pods(ns).List(ctx, sel); err == nil {
			for i := range pods.Items {
				if owned(&pods.Items[i]) {
					del(o.cs.CoreV1().Pods(ns).Delete(ctx, pods.Items[i].Name, opts))
				}
			}
		}
		if cms, err := o.cs.CoreV1().ConfigMaps(ns).List(ctx, sel); err == nil {
			for i := range cms.Items {
				if owned(&cms.Items[i]) {
					del(o.cs.CoreV1().ConfigMaps(ns).Delete(ctx, cms.Items[i].Name, opts))
				}
			}
		}
		if ss, err := o.cs.CoreV1().Secrets(ns).List(ctx, sel); err == nil {
			for i := range ss.Items {
				if owned(&ss.Items[i]) {
					del(o.cs.CoreV1().Secrets(ns).Delete(ctx, ss.Items[i].Name, opts))
				}
			}
		}
		if cs, err := o.cs.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{}); err == nil {
			for i := range cs.Items {
				if owned(&cs.Items[i]) {
					del(o.cs.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, cs.Items[i].Name, opts))
				}
			}
		}
	}()
}
