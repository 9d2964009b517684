package beegfs

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/conditions"
	"github.com/beeburst/beeburst/internal/engine"
	"github.com/beeburst/beeburst/internal/nodetask"
)

// visit is what the steps of one Provision share.
type visit struct {
	bb    *v1alpha1.BurstBuffer
	nodes []string
	in    Instance
	place Placement
	res   engine.Result
	// mgmtd is the management service's pod, once mgmtdStep found it ready.
	mgmtd *corev1.Pod
}

// provisionStep is one step of Provision: done when the next may run in this visit.
type provisionStep func(ctx context.Context, v *visit) (done bool, err error)

// checkModulesStep: without the kernel module nothing else is worth starting, and the user
// should learn it in seconds, not after services time out.
func (e Engine) checkModulesStep(ctx context.Context, v *visit) (bool, error) {
	return e.checkModules(ctx, v.in, &v.res)
}

// capacityStep stops before anything is written when a node has no space free, or less than
// spec.storage.capacityPerNode (its module check said how much): the controller refuses
// such a burst buffer (InsufficientCapacity), and no service should start for it meanwhile.
func (e Engine) capacityStep(_ context.Context, v *visit) (bool, error) {
	want := v.bb.Spec.Storage.CapacityPerNode
	for _, n := range v.nodes {
		free, ok := v.res.FreeBytes[n]
		switch {
		case !ok:
			continue
		case free <= 0:
			v.res.Message = fmt.Sprintf("node %s has no space free at spec.storage.path: no service is started", n)
		case want != nil && free < want.Value():
			v.res.Message = fmt.Sprintf("node %s has less space free than spec.storage.capacityPerNode %s: no service is started", n, want)
		default:
			continue
		}
		v.res.Reason = v1alpha1.ReasonInsufficientCapacity
		return false, nil
	}
	return true, nil
}

// allocateStep records the ports and the address before anything listens. The visit ends
// here so that the status patch lands before the first service pod exists.
func (e Engine) allocateStep(ctx context.Context, v *visit) (bool, error) {
	if s := v.bb.Status.BeeGFS; s != nil && s.ManagementAddress != "" {
		return true, nil
	}
	return false, e.allocate(ctx, v.in, &v.res)
}

// filesStep: connection authentication and mgmtd's TLS material; the licence, if any; the
// files the services read at start (mgmtd's configuration, each node's interface filter).
func (e Engine) filesStep(ctx context.Context, v *visit) (bool, error) {
	if v.in.authOn() {
		if ok, err := e.ensureSecret(ctx, v.in, &v.res); err != nil || !ok {
			return false, err
		}
	}
	if ok, err := e.checkLicenseSecret(ctx, v.in, &v.res); err != nil || !ok {
		return false, err
	}
	var err error
	if v.in.Addresses, err = e.addresses(ctx, v.nodes); err != nil {
		return false, err
	}
	return e.ensureConfigMap(ctx, v.in, &v.res)
}

// mgmtdStep starts the management service and waits until it is ready.
func (e Engine) mgmtdStep(ctx context.Context, v *visit) (bool, error) {
	mg, err := e.ensurePod(ctx, v.in.MgmtdPod(v.place.Mgmtd))
	if err != nil {
		return false, err
	}
	if ready, detail := podReady(mg); !ready {
		p := v.in.Ports()
		v.res.Message = fmt.Sprintf("starting the management service on %s (ports %d-%d): %s", v.place.Mgmtd, p.Storage, p.GRPC, detail)
		return false, nil
	}
	v.mgmtd = mg
	return true, nil
}

// servicesStep starts the metadata and storage services and waits until each is ready; a
// server that cannot register (no machine UUID, or beyond mgmtd's licence) fails the burst
// buffer.
func (e Engine) servicesStep(ctx context.Context, v *visit) (bool, error) {
	bb, place := v.bb, v.place
	var services []*corev1.Pod
	for i, n := range place.Meta {
		services = append(services, v.in.MetaPod(i, n))
	}
	for i, n := range place.Storage {
		services = append(services, v.in.StoragePod(i, n))
	}
	pods, err := e.ensurePods(ctx, services)
	if err != nil {
		return false, err
	}
	var waiting, registering []string
	for i, want := range services {
		pod := pods[i]
		if ready, detail := podReady(pod); !ready {
			if pod.Status.Phase == corev1.PodRunning && pod.DeletionTimestamp.IsZero() {
				// Started but not listening: a C++ service opens its port once mgmtd has
				// registered it.
				registering = append(registering, fmt.Sprintf("%s on %s", want.Labels[nodetask.LabelComponent], want.Spec.NodeName))
			}
			if strings.Contains(detail, machineUUIDLog) {
				// The preflight passed, yet the daemon found no UUID (another container
				// runtime's view of /sys): as terminal as a failed preflight.
				v.res.Reason = v1alpha1.ReasonMachineUUIDMissing
				v.res.Message = fmt.Sprintf("%s on %s cannot register: %q; BeeGFS 8 servers need the node's machine UUID (DMI product_uuid) inside their container; choose other nodes or use spec.engine: local",
					want.Labels[nodetask.LabelComponent], want.Spec.NodeName, machineUUIDLog)
				return false, nil
			}
			waiting = append(waiting, fmt.Sprintf("%s on %s: %s", want.Labels[nodetask.LabelComponent], want.Spec.NodeName, detail))
		}
	}
	if len(waiting) == 0 {
		return true, nil
	}
	if len(registering) > 0 && e.Logs != nil {
		if e.refusedMachines(ctx, v.mgmtd) {
			machines := serverMachines(place)
			msg := fmt.Sprintf("the management service refuses to register servers on more machines than its licence allows (%q in its log; not registered: %s): this burst buffer runs metadata and storage servers on %d machine(s), its nodes. Recreate it with spec.beegfs.licenseSecret naming a licence for at least %d machines (key %s), on fewer nodes, or with spec.engine: local",
				machineLimitLog, limitList(registering, 8), machines, machines, KeyLicense)
			conditions.Set(bb, v1alpha1.ConditionClientsMounted, metav1.ConditionFalse, v1alpha1.ReasonLicenseRequired, msg)
			v.res.Reason, v.res.Message = v1alpha1.ReasonLicenseRequired, msg
			return false, nil
		}
		// mgmtd's log is watched by nothing: look again while servers wait to register.
		v.res.RequeueAfter = registrationRecheck
	}
	v.res.Message = fmt.Sprintf("starting %d metadata and %d storage service(s); %d not ready: %s",
		len(place.Meta), len(place.Storage), len(waiting), limitList(waiting, 8))
	return false, nil
}

// readyStep waits until mgmtd lists every target registered, online and good.
func (e Engine) readyStep(ctx context.Context, v *visit) (bool, error) {
	if ok, err := e.runStep(ctx, v.bb, v.in.ReadyPod(), &v.res, v1alpha1.ReasonServicesNotReady,
		"services run; waiting until mgmtd lists every target online and good",
		"not every target is online and good (retrying)"); err != nil || !ok {
		return false, err
	}
	for _, n := range v.nodes {
		v.res.Prepared[n] = false
	}
	return true, nil
}

// stripingStep sets the root's stripe pattern from spec.layout.
func (e Engine) stripingStep(ctx context.Context, v *visit) (bool, error) {
	st := StripingFor(v.bb, len(v.nodes))
	return e.runStep(ctx, v.bb, v.in.StripePod(), &v.res, v1alpha1.ReasonStripingFailed,
		fmt.Sprintf("setting the root's stripe pattern: chunk size %s over %d target(s)", st.ChunkSize, st.NumTargets),
		"setting the stripe pattern failed (retrying)")
}

// clientsStep mounts the file system on every node; a client refused for want of a licence
// fails the burst buffer.
func (e Engine) clientsStep(ctx context.Context, v *visit) (bool, error) {
	bb, nodes := v.bb, v.nodes
	wants := make([]*corev1.Pod, len(v.place.Clients))
	for i, n := range v.place.Clients {
		wants[i] = v.in.ClientPod(i, n)
	}
	pods, err := e.ensurePods(ctx, wants)
	if err != nil {
		return false, err
	}
	var notMounted []string
	for i, n := range v.place.Clients {
		pod := pods[i]
		ready, detail := podReady(pod)
		v.res.Prepared[n] = ready
		if !ready {
			if licenceRefusal(detail) == clientLimit {
				msg := fmt.Sprintf("the management service refused the client on %s for want of a licence (%q): BeeGFS releases after 8.3.1 admit at most 5 clients without one, and this burst buffer mounts %d. Recreate it with spec.beegfs.licenseSecret naming a Secret with the licence (key %s), on at most 5 nodes, or with spec.engine: local",
					n, clientLimitLog, len(v.place.Clients), KeyLicense)
				conditions.Set(bb, v1alpha1.ConditionClientsMounted, metav1.ConditionFalse, v1alpha1.ReasonLicenseRequired, msg)
				v.res.Reason, v.res.Message = v1alpha1.ReasonLicenseRequired, msg
				return false, nil
			}
			notMounted = append(notMounted, n+": "+detail)
		}
	}
	if len(notMounted) > 0 {
		msg := fmt.Sprintf("mounting at %s: %d of %d node(s) done; waiting: %s", MountPoint(bb), len(nodes)-len(notMounted), len(nodes), limitList(notMounted, 8))
		conditions.Set(bb, v1alpha1.ConditionClientsMounted, metav1.ConditionFalse, v1alpha1.ReasonMounting, msg)
		v.res.Message = msg
		return false, nil
	}
	return true, nil
}
