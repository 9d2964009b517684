// Package beegfs is the BeeGFS engine: an ad-hoc BeeGFS 8 instance over the burst buffer's
// nodes in BeeOND's layout, run as pods. Builders (configuration, pod specs, the auth Secret,
// port-shift allocation) are pure functions with golden-file tests; Engine applies them.
//
// Provision runs, one step per visit until each is done (watches on the owned pods bring the
// next visit): (a) a client-module check on every node - a node without the beegfs kernel
// module fails the burst buffer at once, with a message that says what to install; (b) the
// port shift and management address, recorded in status.beegfs before anything listens;
// (c) the auth Secret; (d) mgmtd; (e) metadata and storage services; (f) a readiness task
// (targets registered, online and good, as mgmtd sees them); (g) the root's striping;
// (h) a client mount on every node. Teardown runs in reverse: clients (unmount), services,
// target directories.
//
// Clients: a privileged pod per node mounts with the kernel client, rather than the BeeGFS CSI
// driver. The CSI driver is a cluster-wide install of its own, and it ignores connPortShift in
// its per-file-system client configuration (beegfs-csi-driver pkg/beegfs/config.go,
// noEffectBeegfsConfOptions), which the per-burst-buffer port shift needs. The rest of the
// engine does not depend on the choice: a CSI variant would replace the client step with a
// PersistentVolume pointing at status.beegfs.managementAddress.
package beegfs

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/conditions"
	"github.com/beeburst/beeburst/internal/engine"
	"github.com/beeburst/beeburst/internal/nodetask"
	"github.com/beeburst/beeburst/internal/parallel"
	"github.com/beeburst/beeburst/internal/shorten"
)

// Engine is the beegfs engine.
type Engine struct {
	Client client.Client
	// Reader lists the other BurstBuffers when a port shift is allocated. The manager's API
	// reader (uncached) keeps two burst buffers created at once from picking the same shift
	// out of a stale cache. Nil: Client.
	Reader client.Reader
	// AgentImage runs the module check and the directory removal.
	AgentImage string
	// TaskNamespace runs the directory removal when the burst buffer's namespace is being
	// deleted (engine.RemoveNodeData); the operator's namespace. Empty: never elsewhere.
	TaskNamespace string
	// Rand and Now generate the auth Secret (tests replace them). Nil: crypto/rand, time.Now.
	Rand io.Reader
	Now  func() time.Time
	// Logs returns the last lines of a pod's log. The management service's is read while
	// servers wait to register: a licence limit refuses them there and nowhere else. Nil: not
	// read (a refused server then waits like a slow one).
	Logs func(ctx context.Context, namespace, name string, lines int64) (string, error)
}

var _ engine.Engine = Engine{}

func (e Engine) instance(bb *v1alpha1.BurstBuffer, nodes []string) Instance {
	in := Instance{BB: bb, Nodes: nodes, Images: ImagesFor(bb), AgentImage: e.AgentImage}
	if st := bb.Status.BeeGFS; st != nil {
		in.Shift = st.ConnPortShift
		if h, _, err := net.SplitHostPort(st.ManagementAddress); err == nil {
			in.MgmtdHost = h
		}
	}
	return in
}

// addresses reads the nodes' addresses (NodeAddress), which restrict each node's services and
// client to the interface the other nodes reach it on.
func (e Engine) addresses(ctx context.Context, nodes []string) (map[string]string, error) {
	out := make(map[string]string, len(nodes))
	for _, n := range nodes {
		var node corev1.Node
		if err := e.Client.Get(ctx, client.ObjectKey{Name: n}, &node); err != nil {
			return nil, fmt.Errorf("reading node %s: %w", n, err)
		}
		out[n] = NodeAddress(&node)
	}
	return out, nil
}

// Provision runs the steps below in order, stopping at the first that is not done, like the
// controller's pipeline, and reports where it is; once the file system was up, whether it
// still is (stillUp).
func (e Engine) Provision(ctx context.Context, bb *v1alpha1.BurstBuffer, nodes []string) (engine.Result, error) {
	res := engine.Result{Prepared: map[string]bool{}, Reason: v1alpha1.ReasonProvisioning}
	if e.Client == nil {
		return res, errors.New("the beegfs engine has no Kubernetes client (operator wiring)")
	}
	if len(nodes) == 0 {
		return res, errors.New("the beegfs engine needs the burst buffer's nodes")
	}
	in := e.instance(bb, nodes)
	place := PlacementFor(bb, nodes)

	// Once up, the file system stays up while its daemons run: a readiness probe that fails
	// on a node busy with benchmarks is no reason to go back (stillUp). status.mount.hostPath
	// is set when it first came up; the steps below are done then.
	if bb.Status.Mount != nil && bb.Status.Mount.HostPath != "" {
		var err error
		if in.Addresses, err = e.addresses(ctx, nodes); err != nil {
			return res, err
		}
		return e.stillUp(ctx, in, place)
	}

	v := &visit{bb: bb, nodes: nodes, in: in, place: place, res: res}
	for _, step := range []provisionStep{
		e.checkModulesStep, // (a) the kernel module, first
		e.capacityStep,     //     and the space asked for fits what is free
		e.allocateStep,     // (b) ports and the management address, recorded first
		e.filesStep,        // (c) auth, licence, configuration
		e.mgmtdStep,        // (d) mgmtd
		e.servicesStep,     // (e) metadata and storage services
		e.readyStep,        // (f) every target registered, online and good
		e.stripingStep,     // (g) the root's striping
		e.clientsStep,      // (h) a mount on every node
	} {
		if done, err := step(ctx, v); err != nil || !done {
			return v.res, err
		}
	}
	return up(v.in, v.place, v.res), nil
}

// up is the result of a file system that is up: every daemon runs, every node mounted it.
func up(in Instance, place Placement, res engine.Result) engine.Result {
	bb, nodes := in.BB, in.Nodes
	st := StripingFor(bb, len(nodes))
	conditions.Set(bb, v1alpha1.ConditionClientsMounted, metav1.ConditionTrue, v1alpha1.ReasonMounted,
		fmt.Sprintf("mounted at %s on %d node(s)", MountPoint(bb), len(nodes)))
	for _, n := range nodes {
		res.Prepared[n] = true
	}
	res.Ready = true
	res.Reason = v1alpha1.ReasonProvisioned
	res.Message = fmt.Sprintf("BeeGFS %s: mgmtd on %s (%s), %d metadata and %d storage target(s), striping %s x %d, mounted on %d node(s)",
		Version, place.Mgmtd, in.ManagementAddress(), len(place.Meta), len(nodes)*TargetsPerNode(bb), st.ChunkSize, st.NumTargets, len(nodes))
	res.Mount = &v1alpha1.MountStatus{Path: bb.Spec.Workload.MountPath, HostPath: MountPoint(bb)}
	res.RequeueAfter = 0
	return res
}

// stillUp checks a file system that was up: it stays up while every daemon's and client's
// container runs - a readiness probe that times out while benchmarks load the node is busy,
// not gone. It goes back only for a component that is really gone (gone): its pod deleted
// (made again here), its container exited or waiting to restart, or started again and not
// Ready since. The client's container ends itself when its mount goes away (ClientScript),
// so a lost mount is an exited client. The same check says when all is back.
func (e Engine) stillUp(ctx context.Context, in Instance, place Placement) (engine.Result, error) {
	bb := in.BB
	res := engine.Result{Prepared: map[string]bool{}}
	e.checkedFree(ctx, in, &res)
	services := []*corev1.Pod{in.MgmtdPod(place.Mgmtd)}
	for i, n := range place.Meta {
		services = append(services, in.MetaPod(i, n))
	}
	for i, n := range place.Storage {
		services = append(services, in.StoragePod(i, n))
	}
	var exited, lostMounts []string
	for _, want := range services {
		pod, made, err := e.ensurePodMade(ctx, want)
		if err != nil {
			return res, err
		}
		if why := gone(pod, made); why != "" {
			exited = append(exited, fmt.Sprintf("the %s service on node %s %s", componentName(want), want.Spec.NodeName, why))
		}
	}
	for i, n := range place.Clients {
		pod, made, err := e.ensurePodMade(ctx, in.ClientPod(i, n))
		if err != nil {
			return res, err
		}
		if why := gone(pod, made); why != "" {
			lostMounts = append(lostMounts, fmt.Sprintf("node %s: its client %s", n, why))
		}
	}
	switch {
	case len(lostMounts) > 0:
		msg := fmt.Sprintf("the mount at %s is gone on %d of %d node(s): %s", MountPoint(bb), len(lostMounts), len(place.Clients), limitList(lostMounts, 8))
		if len(exited) > 0 {
			msg += "; " + limitList(exited, 8)
		}
		msg += "; the kubelet restarts the client, which mounts again"
		conditions.Set(bb, v1alpha1.ConditionClientsMounted, metav1.ConditionFalse, v1alpha1.ReasonMountLost, msg)
		res.Reason, res.Message = v1alpha1.ReasonMountLost, msg
	case len(exited) > 0:
		res.Reason = v1alpha1.ReasonServiceExited
		res.Message = fmt.Sprintf("%s, after the file system was up; it is back when the service runs and is Ready again",
			limitList(exited, 8))
	default:
		return up(in, place, res), nil
	}
	return res, nil
}

// gone says how a long-running pod that was up is gone, "" while its container runs and
// has been Ready since it started (Ready or not now: a readiness probe that fails is no
// loss); made: the pod was not there, and was made again. Whether the container has been
// Ready since it started is read from the kubelet's own times, on the node's clock: a Ready
// condition that went False after the container started went False from True (busy); one
// False since before it started is a new pod's or a restarted container's, not Ready yet.
func gone(p *corev1.Pod, made bool) string {
	switch {
	case made:
		return "was deleted; its pod is made again"
	case !p.DeletionTimestamp.IsZero():
		return "is being deleted"
	case p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded:
		return fmt.Sprintf("ended (%s: %s)", p.Status.Phase, shorten.OneLine(p.Status.Reason+" "+p.Status.Message, messageMax))
	}
	var ready *corev1.PodCondition
	for i, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			ready = &p.Status.Conditions[i]
		}
	}
	if ready != nil && ready.Status == corev1.ConditionTrue {
		return ""
	}
	for _, cs := range p.Status.ContainerStatuses {
		last := ""
		if t := cs.LastTerminationState.Terminated; t != nil {
			last = fmt.Sprintf(" (it exited %d at %s: %s)", t.ExitCode, t.FinishedAt.UTC().Format(time.RFC3339), shorten.OneLine(t.Message, messageMax))
		}
		switch {
		case cs.State.Terminated != nil:
			t := cs.State.Terminated
			return fmt.Sprintf("exited %d: %s", t.ExitCode, shorten.OneLine(t.Message, messageMax))
		case cs.State.Waiting != nil:
			return fmt.Sprintf("is not running (%s)%s", cs.State.Waiting.Reason, last)
		case cs.State.Running != nil && (ready == nil || !ready.LastTransitionTime.After(cs.State.Running.StartedAt.Time)):
			if cs.RestartCount > 0 {
				return "restarted and is not ready again" + last
			}
			return "started again and is not ready yet"
		}
	}
	if p.Status.Phase != corev1.PodRunning {
		return fmt.Sprintf("is not running (%s)", orCreated(string(p.Status.Phase)))
	}
	return "" // running: busy at most
}

func orCreated(phase string) string {
	if phase == "" {
		return "created"
	}
	return phase
}

// componentName is a service pod's component, as the condition names it.
func componentName(p *corev1.Pod) string {
	switch p.Labels[nodetask.LabelComponent] {
	case nodetask.ComponentMgmtd:
		return "management"
	case nodetask.ComponentMeta:
		return "metadata"
	case nodetask.ComponentStorage:
		return "storage"
	}
	return p.Labels[nodetask.LabelComponent]
}

// checkModules runs the module check on every node; done when all passed.
func (e Engine) checkModules(ctx context.Context, in Instance, res *engine.Result) (bool, error) {
	var missing, noUUID, broken []string
	passed := 0
	for i, n := range in.Nodes {
		pod := in.ModuleCheckPod(i, n)
		st, msg, err := engine.RunTask(ctx, e.Client, pod)
		if err != nil {
			return false, err
		}
		switch st {
		case nodetask.Succeeded:
			passed++
			recordFree(res, n, msg)
		case nodetask.Failed:
			if m := shorten.OneLine(bench.ReportMessage(msg), messageMax); strings.HasPrefix(m, ModuleMissingPrefix) {
				missing = append(missing, n)
			} else if strings.HasPrefix(m, MachineUUIDMissingPrefix) {
				noUUID = append(noUUID, n)
			} else {
				broken = append(broken, fmt.Sprintf("%s: %s", n, m))
				// Not an answer about the module (image, deadline): ask again.
				if err := e.Client.Delete(ctx, pod); client.IgnoreNotFound(err) != nil {
					return false, err
				}
			}
		}
	}
	switch {
	case len(missing) > 0:
		sort.Strings(missing)
		msg := fmt.Sprintf("the BeeGFS client kernel module is not loaded on %d of %d node(s): %s; install the BeeGFS 8 client (beegfs-client package / DKMS) on these nodes, or create the burst buffer with spec.engine: local",
			len(missing), len(in.Nodes), strings.Join(missing, ", "))
		conditions.Set(in.BB, v1alpha1.ConditionClientsMounted, metav1.ConditionFalse, v1alpha1.ReasonClientModuleMissing, msg)
		*res = engine.Result{Reason: v1alpha1.ReasonClientModuleMissing, Message: msg, Prepared: res.Prepared}
		return false, nil
	case len(noUUID) > 0:
		sort.Strings(noUUID)
		msg := fmt.Sprintf("%d of %d node(s) have no machine UUID (DMI product_uuid): %s; BeeGFS 8 metadata and storage servers refuse to register without one (\"Couldn't determine UUID for machine\"), and every node runs a storage server. Real servers and cloud VMs have one (a virtual machine needs an SMBIOS UUID, e.g. QEMU -uuid); choose other nodes or use spec.engine: local",
			len(noUUID), len(in.Nodes), strings.Join(noUUID, ", "))
		*res = engine.Result{Reason: v1alpha1.ReasonMachineUUIDMissing, Message: msg, Prepared: res.Prepared}
		return false, nil
	case len(broken) > 0:
		sort.Strings(broken)
		res.Reason = v1alpha1.ReasonModuleCheckFailed
		res.Message = "could not check the BeeGFS client module (retrying): " + limitList(broken, 8)
		return false, nil
	case passed < len(in.Nodes):
		res.Message = fmt.Sprintf("checking the BeeGFS client kernel module: %d of %d node(s) done", passed, len(in.Nodes))
		conditions.Set(in.BB, v1alpha1.ConditionClientsMounted, metav1.ConditionUnknown, v1alpha1.ReasonPending, res.Message)
		return false, nil
	}
	return true, nil
}

// recordFree puts the space free on node that its module check reported (msg) on res; an
// agent that did not report it leaves the node unknown (0 is a full file system).
func recordFree(res *engine.Result, node, msg string) {
	rep, err := bench.DecodeReport([]byte(msg))
	if err != nil || rep.FreeBytes == nil {
		return
	}
	if res.FreeBytes == nil {
		res.FreeBytes = map[string]int64{}
	}
	res.FreeBytes[node] = *rep.FreeBytes
}

// checkedFree is, once the file system is up, the space free on each node that its module
// check found before the services wrote there: what a burst buffer that reuses figures of
// other burst buffers' probes shows as its own. The pods are read, never made again: a
// check made now would count the burst buffer's own data as used.
func (e Engine) checkedFree(ctx context.Context, in Instance, res *engine.Result) {
	for i, n := range in.Nodes {
		var pod corev1.Pod
		// Unknown when unreadable: whether the file system is up does not depend on it.
		if e.Client.Get(ctx, client.ObjectKeyFromObject(in.ModuleCheckPod(i, n)), &pod) != nil {
			continue
		}
		if st, msg := nodetask.StateOf(&pod); st == nodetask.Succeeded {
			recordFree(res, n, msg)
		}
	}
}

// allocate picks the port shift and records it with the management address in status.
func (e Engine) allocate(ctx context.Context, in Instance, res *engine.Result) error {
	bb := in.BB
	place := PlacementFor(bb, in.Nodes)
	var node corev1.Node
	if err := e.Client.Get(ctx, client.ObjectKey{Name: place.Mgmtd}, &node); err != nil {
		return fmt.Errorf("reading the management node %s: %w", place.Mgmtd, err)
	}
	host := NodeAddress(&node)

	reader := e.Reader
	if reader == nil {
		reader = e.Client
	}
	var list v1alpha1.BurstBufferList
	if err := reader.List(ctx, &list); err != nil {
		return err
	}
	shift, err := AllocateShift(UsedShifts(bb, in.Nodes, list.Items))
	if err != nil {
		res.Reason, res.Message = v1alpha1.ReasonPortShiftExhausted, err.Error()
		return nil
	}
	st := &v1alpha1.BeeGFSStatus{ConnPortShift: shift}
	in.Shift, in.MgmtdHost = shift, host
	st.ManagementAddress = in.ManagementAddress()
	if in.authOn() {
		st.AuthSecretName = SecretName(bb)
	}
	bb.Status.BeeGFS = st
	p := in.Ports()
	res.Message = fmt.Sprintf("allocated port shift %d (ports %d-%d); management service on %s", shift, p.Storage, p.GRPC, st.ManagementAddress)
	return nil
}

// UsedShifts are the port shifts of the other beegfs burst buffers that share a node with
// this one (by their status.nodes).
func UsedShifts(bb *v1alpha1.BurstBuffer, nodes []string, all []v1alpha1.BurstBuffer) []int32 {
	var used []int32
	for _, o := range all {
		if o.UID == bb.UID && o.Namespace == bb.Namespace && o.Name == bb.Name {
			continue
		}
		if o.Status.BeeGFS == nil {
			continue
		}
		var on []string
		for _, n := range o.Status.Nodes {
			on = append(on, n.Name)
		}
		if Shares(nodes, on) {
			used = append(used, o.Status.BeeGFS.ConnPortShift)
		}
	}
	sort.Slice(used, func(i, j int) bool { return used[i] < used[j] })
	return used
}

// NodeAddress is the address other nodes reach a node's host network on: its InternalIP,
// else ExternalIP, else its name (which may not resolve: clusters built here have no DNS for
// node names).
func NodeAddress(n *corev1.Node) string {
	for _, t := range []corev1.NodeAddressType{corev1.NodeInternalIP, corev1.NodeExternalIP, corev1.NodeHostName} {
		for _, a := range n.Status.Addresses {
			if a.Type == t && a.Address != "" {
				return a.Address
			}
		}
	}
	return n.Name
}

func (e Engine) ensureSecret(ctx context.Context, in Instance, res *engine.Result) (bool, error) {
	var cur corev1.Secret
	err := e.Client.Get(ctx, client.ObjectKey{Namespace: nodetask.Namespace(in.BB), Name: SecretName(in.BB)}, &cur)
	if err == nil {
		if !nodetask.BelongsTo(in.BB, &cur) {
			res.Reason = v1alpha1.ReasonSecretConflict
			res.Message = fmt.Sprintf("Secret %s exists and does not belong to this burst buffer; delete or rename it", SecretName(in.BB))
			return false, nil
		}
		return true, nil
	}
	if !apierrors.IsNotFound(err) {
		return false, err
	}
	r, now := e.Rand, time.Now
	if r == nil {
		r = rand.Reader
	}
	if e.Now != nil {
		now = e.Now
	}
	sec, err := NewSecret(in.BB, r, now(), in.MgmtdHost)
	if err != nil {
		return false, err
	}
	err = e.Client.Create(ctx, sec)
	if apierrors.IsAlreadyExists(err) {
		// The cache holds only the operator's own Secrets: one it does not see may be a
		// user's of the same name. Read it past the cache before trusting it.
		reader := e.Reader
		if reader == nil {
			reader = e.Client
		}
		if err := reader.Get(ctx, client.ObjectKeyFromObject(sec), &cur); err != nil {
			return false, err
		}
		if !nodetask.BelongsTo(in.BB, &cur) {
			res.Reason = v1alpha1.ReasonSecretConflict
			res.Message = fmt.Sprintf("Secret %s exists and does not belong to this burst buffer; delete or rename it", SecretName(in.BB))
			return false, nil
		}
		return true, nil
	}
	return err == nil, err
}

// checkLicenseSecret waits for spec.beegfs.licenseSecret, if one is named: mgmtd would not
// start without the Secret (the kubelet cannot mount it), and the user should read why here.
func (e Engine) checkLicenseSecret(ctx context.Context, in Instance, res *engine.Result) (bool, error) {
	name := in.licenseSecret()
	if name == "" {
		return true, nil
	}
	// The user's Secret is not in the operator's cache (it caches its own Secrets only): read
	// it from the API and look again later, as no watch will announce it.
	reader := e.Reader
	if reader == nil {
		reader = e.Client
	}
	var sec corev1.Secret
	err := reader.Get(ctx, client.ObjectKey{Namespace: in.BB.Namespace, Name: name}, &sec)
	res.RequeueAfter = licenseRecheck
	switch {
	case apierrors.IsNotFound(err):
		res.Reason = v1alpha1.ReasonLicenseSecretMissing
		res.Message = fmt.Sprintf("waiting for Secret %s (spec.beegfs.licenseSecret) with the key %s: create it with the BeeGFS licence certificate, e.g. kubectl create secret generic %s --from-file=%s=license.pem", name, KeyLicense, name, KeyLicense)
		return false, nil
	case err != nil:
		return false, err
	case len(sec.Data[KeyLicense]) == 0:
		res.Reason = v1alpha1.ReasonLicenseSecretMissing
		res.Message = fmt.Sprintf("Secret %s (spec.beegfs.licenseSecret) has no key %s: add the BeeGFS licence certificate under that key", name, KeyLicense)
		return false, nil
	}
	res.RequeueAfter = 0
	return true, e.copyLicense(ctx, in.BB, sec.Data[KeyLicense])
}

// copyLicense puts the licence where the management service mounts it from, when that is not
// the user's Secret itself (LicenseCopyName): a copy in the task namespace, kept in step with
// the user's Secret until the service starts.
func (e Engine) copyLicense(ctx context.Context, bb *v1alpha1.BurstBuffer, license []byte) error {
	if LicenseCopyName(bb) == bb.Spec.BeeGFS.LicenseSecret && nodetask.Namespace(bb) == bb.Namespace {
		return nil
	}
	want := LicenseCopy(bb, license)
	var cur corev1.Secret
	err := e.Client.Get(ctx, client.ObjectKeyFromObject(want), &cur)
	switch {
	case apierrors.IsNotFound(err):
		return client.IgnoreAlreadyExists(e.Client.Create(ctx, want))
	case err != nil:
		return err
	case !nodetask.BelongsTo(bb, &cur):
		return fmt.Errorf("Secret %s/%s exists and does not belong to this burst buffer", cur.Namespace, cur.Name)
	case !bytes.Equal(cur.Data[KeyLicense], license):
		cur.Data = want.Data
		return e.Client.Update(ctx, &cur)
	}
	return nil
}

// licenseRecheck is how often a missing licence Secret is looked for again.
const licenseRecheck = 10 * time.Second

// ensureConfigMap creates the instance's ConfigMap before the first service reads it. An
// existing one that is not this burst buffer's is a conflict the user must resolve.
func (e Engine) ensureConfigMap(ctx context.Context, in Instance, res *engine.Result) (bool, error) {
	want := in.ConfigMap()
	var cur corev1.ConfigMap
	err := e.Client.Get(ctx, client.ObjectKeyFromObject(want), &cur)
	if err == nil {
		if !nodetask.BelongsTo(in.BB, &cur) {
			res.Reason = v1alpha1.ReasonConfigConflict
			res.Message = fmt.Sprintf("ConfigMap %s exists and does not belong to this burst buffer; delete or rename it", want.Name)
			return false, nil
		}
		return true, nil
	}
	if !apierrors.IsNotFound(err) {
		return false, err
	}
	if err := e.Client.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
		return false, err
	}
	return true, nil
}

// ensurePod creates a long-running pod unless it exists and returns what the API has. Pods
// are immutable: an existing pod is read, not re-applied.
func (e Engine) ensurePod(ctx context.Context, want *corev1.Pod) (*corev1.Pod, error) {
	p, _, err := e.ensurePodMade(ctx, want)
	return p, err
}

// ensurePods is ensurePod for several pods, several at a time (parallel.Do): a visit to a
// burst buffer of many nodes waits for the API server once per batch, not once per pod.
func (e Engine) ensurePods(ctx context.Context, wants []*corev1.Pod) ([]*corev1.Pod, error) {
	pods := make([]*corev1.Pod, len(wants))
	err := parallel.Do(len(wants), func(i int) (err error) {
		pods[i], err = e.ensurePod(ctx, wants[i])
		return err
	})
	return pods, err
}

// ensurePodMade is ensurePod that also says whether it made the pod on this visit.
func (e Engine) ensurePodMade(ctx context.Context, want *corev1.Pod) (*corev1.Pod, bool, error) {
	var cur corev1.Pod
	err := e.Client.Get(ctx, client.ObjectKeyFromObject(want), &cur)
	if apierrors.IsNotFound(err) {
		if err := e.Client.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, false, err
		}
		return want, true, nil
	}
	return &cur, false, err
}

// What the daemons say in the failures no retry can fix. machineUUIDLog: meta and storage
// (ThinkParQ/beegfs meta/source/app/App.cpp, storage InternodeSyncer). The licence limits,
// in mgmtd's words (ThinkParQ/beegfs-rust mgmtd/src/bee_msg/common.rs):
//   - machineLimitLog: 8.3.1 with a licence loaded refuses a metadata or storage server on a
//     machine beyond the licensed number ("Licensed machine limit reached. Node registration
//     denied."). Only mgmtd's log says so: the refused server logs "Node registration not
//     successful. Management node offline?" and retries forever without opening its port.
//   - clientLimitLog: releases after 8.3.1 (0b5af5c) without a licence refuse the sixth
//     client ("Number of licensed clients (5) exhausted. Client registration denied."), as it
//     reaches the client's kernel log, which the client pod keeps in its termination message.
const (
	machineUUIDLog  = "Couldn't determine UUID for machine"
	machineLimitLog = "Licensed machine limit reached"
	clientLimitLog  = "licensed clients"
)

// licenceLimit is the licence limit a refusal names.
type licenceLimit int

const (
	noLimit licenceLimit = iota
	machineLimit
	clientLimit
)

// licenceRefusal says which licence limit, if any, a log or termination message reports
// mgmtd refusing a registration for.
func licenceRefusal(text string) licenceLimit {
	switch {
	case strings.Contains(text, machineLimitLog):
		return machineLimit
	case strings.Contains(text, clientLimitLog):
		return clientLimit
	}
	return noLimit
}

// mgmtdLogLines is how much of mgmtd's log is read for a refusal. At its default level (warn)
// mgmtd logs little else, and a refused server asks again every 10 s, so the words recur.
const mgmtdLogLines = 100

// registrationRecheck is how often mgmtd's log is read again while servers wait to register.
const registrationRecheck = 10 * time.Second

// refusedMachines reads mgmtd's log for the machine limit's refusal. Best effort: a log that
// cannot be read (no kubelet answer) is no refusal, and the servers go on waiting.
func (e Engine) refusedMachines(ctx context.Context, mgmtd *corev1.Pod) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	log, err := e.Logs(ctx, mgmtd.Namespace, mgmtd.Name, mgmtdLogLines)
	return err == nil && licenceRefusal(log) == machineLimit
}

// serverMachines is how many machines run metadata or storage servers, as mgmtd counts them
// against a licence (one machine UUID per node).
func serverMachines(p Placement) int {
	set := map[string]bool{}
	for _, n := range append(append([]string{}, p.Meta...), p.Storage...) {
		set[n] = true
	}
	return len(set)
}

const prevMark = "(previous attempt: "

// runStep runs a one-shot CLI task: done when it succeeded; a failed one is reported and
// deleted, so that the next visit (brought by the deletion) tries again.
func (e Engine) runStep(ctx context.Context, bb *v1alpha1.BurstBuffer, pod *corev1.Pod, res *engine.Result, failReason, runningMsg, failMsg string) (bool, error) {
	st, msg, err := engine.RunTask(ctx, e.Client, pod)
	if err != nil {
		return false, err
	}
	switch st {
	case nodetask.Succeeded:
		return true, nil
	case nodetask.Failed:
		res.Reason = failReason
		res.Message = fmt.Sprintf("%s: %s", failMsg, shorten.OneLine(msg, messageMax))
		if err := e.Client.Delete(ctx, pod); client.IgnoreNotFound(err) != nil {
			return false, err
		}
	default:
		res.Message = runningMsg
		// The failed attempt's pod is gone; keep what it found in view until this one ends.
		if c := meta.FindStatusCondition(bb.Status.Conditions, v1alpha1.ConditionProvisioned); c != nil && c.Reason == failReason {
			found := strings.TrimPrefix(c.Message, failMsg+": ")
			if i := strings.LastIndex(found, prevMark); i >= 0 {
				found = strings.TrimSuffix(found[i+len(prevMark):], ")")
			}
			res.Message = fmt.Sprintf("%s %s%s)", runningMsg, prevMark, found)
			res.Reason = failReason
		}
	}
	return false, nil
}

// Teardown: clients (their pods unmount on SIGTERM) -> services -> target directories. Each
// stage waits until the pods of the previous one are gone, not merely deleted: an unmount that
// has not happened yet must not meet stopped services.
func (e Engine) Teardown(ctx context.Context, bb *v1alpha1.BurstBuffer, nodes []string) (bool, error) {
	if e.Client == nil {
		return false, errors.New("the beegfs engine has no Kubernetes client (operator wiring)")
	}
	in := e.instance(bb, nodes)
	place := PlacementFor(bb, nodes)
	var clients, services []string
	for i := range place.Clients {
		clients = append(clients, nodetask.Name(bb, nodetask.ComponentClient, i))
	}
	services = append(services, nodetask.Name(bb, nodetask.ComponentMgmtd, 0))
	for i := range place.Meta {
		services = append(services, nodetask.Name(bb, nodetask.ComponentMeta, i))
	}
	for i := range place.Storage {
		services = append(services, nodetask.Name(bb, nodetask.ComponentStorage, i))
	}
	for _, stage := range [][]string{clients, services} {
		gone, err := e.deletePods(ctx, nodetask.Namespace(bb), stage)
		if err != nil || !gone {
			return false, err
		}
	}
	// Nothing was allocated, so nothing was written on the nodes (the module check failed, or
	// the burst buffer went before it passed): no directories to remove.
	if bb.Status.BeeGFS == nil {
		return true, nil
	}
	cleans := make([]*corev1.Pod, len(nodes))
	for i, n := range nodes {
		cleans[i] = in.CleanPod(i, n)
	}
	return engine.RemoveNodeData(ctx, e.Client, bb, nodes, cleans, e.TaskNamespace)
}

// deletePods deletes the named pods; true when none is left.
func (e Engine) deletePods(ctx context.Context, namespace string, names []string) (bool, error) {
	left := 0
	for _, name := range names {
		var pod corev1.Pod
		err := e.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &pod)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return false, err
		}
		left++
		if pod.DeletionTimestamp.IsZero() {
			if err := e.Client.Delete(ctx, &pod); client.IgnoreNotFound(err) != nil {
				return false, err
			}
		}
	}
	return left == 0, nil
}

// podReady says whether a long-running pod is Ready, and if not, why, in a few words (the
// per-node detail of the Provisioned message).
func podReady(p *corev1.Pod) (bool, string) {
	if !p.DeletionTimestamp.IsZero() {
		return false, "terminating"
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return true, "ready"
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			d := w.Reason
			if t := cs.LastTerminationState.Terminated; t != nil {
				d += fmt.Sprintf(" (last exit %d: %s)", t.ExitCode, shorten.OneLine(t.Message, messageMax))
			}
			return false, d
		}
		if t := cs.State.Terminated; t != nil {
			return false, fmt.Sprintf("exited %d: %s", t.ExitCode, shorten.OneLine(t.Message, messageMax))
		}
	}
	switch {
	case p.Status.Phase == "":
		return false, "created"
	case p.Status.Phase == corev1.PodRunning:
		return false, "running, not ready yet"
	case p.Status.Reason != "":
		return false, fmt.Sprintf("%s: %s", p.Status.Phase, p.Status.Reason)
	}
	return false, string(p.Status.Phase)
}

func limitList(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, "; ")
	}
	return strings.Join(items[:n], "; ") + fmt.Sprintf("; and %d more", len(items)-n)
}

// messageMax bounds a pod's or a tool's words quoted in a status message.
const messageMax = 400
