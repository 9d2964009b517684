package controllers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/bbmetrics"
	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/nodecache"
)

// gauge finds the value of a series by its labels (a subset), or reports it missing.
func gauge(mfs []*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metrics:
		for _, m := range mf.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue metrics
				}
			}
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

var _ = Describe("Metrics of a burst buffer the operator measured", func() {
	It("publishes every limit of the status, equal to it, and passes Prometheus' lint", func() {
		ctx := context.Background()
		ns := newNamespace(ctx)
		lbls := map[string]string{"pool": ns, v1alpha1.LabelLinkRateBitsPerSecond: "1G",
			v1alpha1.LabelDiskWriteBytesPerSecond: "300M", v1alpha1.LabelDiskReadBytesPerSecond: "400M"}
		makeNode(ctx, ns+"-a", lbls)
		makeNode(ctx, ns+"-b", lbls)
		DeferCleanup(func() {
			for _, n := range []string{ns + "-a", ns + "-b"} {
				_ = k8s.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: nodecache.Name(n)}})
			}
		})
		start := time.Now()
		bb := localBB(ns, "metered", 2)
		bb.Spec.Validation.Profile = v1alpha1.ProfileStandard
		bb.Spec.Validation.Sweep = &v1alpha1.SweepSpec{Nodes: []int32{2}, ProcessesPerNode: []int32{4}}
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		finishPod(ctx, ns, "metered-prep-0", corev1.PodSucceeded, "")
		finishPod(ctx, ns, "metered-prep-1", corev1.PodSucceeded, "")
		finishPod(ctx, ns, "metered-probe-dev-0", corev1.PodSucceeded, deviceReport(ns+"-a", 300e6, 400e6))
		finishPod(ctx, ns, "metered-probe-dev-1", corev1.PodSucceeded, deviceReport(ns+"-b", 150e6, 400e6))
		finishNetwork(ctx, ns, "metered", []string{ns + "-a", ns + "-b"}, 118e6)
		finishPod(ctx, ns, "metered-sweep-0-0", corev1.PodSucceeded, idealReport(ns+"-a", 4, 290e6, 390e6))
		finishPod(ctx, ns, "metered-sweep-0-1", corev1.PodSucceeded, idealReport(ns+"-b", 4, 140e6, 380e6))
		// Node b's device, half its documented figure, is probed once more (the figures of
		// both rounds are in the status).
		finishPod(ctx, ns, "metered-probe-dev-0-r2", corev1.PodSucceeded, deviceReport(ns+"-a", 300e6, 400e6))
		finishPod(ctx, ns, "metered-probe-dev-1-r2", corev1.PodSucceeded, deviceReport(ns+"-b", 150e6, 400e6))
		workload := func(op string, bytes, ops float64) string {
			b, _ := json.Marshal(bench.Report{Command: "workload", Tool: "fio", Phase: bench.PhaseSucceeded,
				Results: []bench.Result{{Operation: bench.Operation(op), BytesPerSecond: bytes, OpsPerSecond: ops, RuntimeSeconds: 5}}})
			return string(b)
		}
		for i, r := range []string{workload("write", 145e6, 145), workload("randwrite", 29e6, 7080), workload("create", 0, 5000)} {
			finishPod(ctx, ns, fmt.Sprintf("metered-bench-%d-0", i), corev1.PodSucceeded, r)
			finishPod(ctx, ns, fmt.Sprintf("metered-bench-%d-1", i), corev1.PodSucceeded, r)
		}
		Eventually(condition(ctx, bb, v1alpha1.ConditionReady), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonReady))
		cur := get(ctx, bb)

		// The collector as the manager registers it, reading through a client instead of the
		// manager's cache.
		collector := bbmetrics.NewCollector(k8s, bbmetrics.Options{Now: start})
		reg := prometheus.NewPedanticRegistry()
		Expect(reg.Register(collector)).To(Succeed())
		mfs, err := reg.Gather()
		Expect(err).NotTo(HaveOccurred())
		problems, err := testutil.CollectAndLint(collector)
		Expect(err).NotTo(HaveOccurred())
		Expect(problems).To(BeEmpty())

		of := func(name string, kv ...string) (float64, bool) {
			l := map[string]string{"namespace": ns, "burstbuffer": "metered"}
			for i := 0; i+1 < len(kv); i += 2 {
				l[kv[i]] = kv[i+1]
			}
			return gauge(mfs, bbmetrics.Prefix+name, l)
		}
		lim := cur.Status.Limits
		for _, c := range []struct {
			stage, op string
			ol        *v1alpha1.OperationLimit
		}{
			{"estimated", "write", &lim.Estimated.Write}, {"estimated", "read", &lim.Estimated.Read},
			{"components", "write", lim.Components.Write}, {"components", "read", lim.Components.Read},
		} {
			Expect(c.ol.LimitBytesPerSecond).To(BeNumerically(">", 0), "%s", c.stage+" "+c.op)
			v, ok := of("limit_bytes_per_second", "stage", c.stage, "operation", c.op)
			Expect(ok).To(BeTrue(), "%s", c.stage+" "+c.op)
			Expect(v).To(Equal(float64(c.ol.LimitBytesPerSecond)), "%s", c.stage+" "+c.op)
			v, ok = of("limit_bottleneck_info", "stage", c.stage, "operation", c.op, "bottleneck", c.ol.Bottleneck)
			Expect(ok && v == 1).To(BeTrue(), "%s", "bottleneck of "+c.stage+" "+c.op)
		}
		v, _ := of("measured_bytes_per_second", "stage", "sweep", "operation", "write")
		Expect(v).To(Equal(float64(lim.Sweep.Write.BestBytesPerSecond)))
		v, _ = of("efficiency_ratio", "stage", "sweep", "operation", "write")
		Expect(v).To(Equal(float64(lim.Sweep.Write.EfficiencyPerMille) / 1000))
		v, _ = of("node_measured_bytes_per_second", "node", ns+"-b", "component", "device", "operation", "write")
		Expect(v).To(Equal(150e6))
		v, _ = of("node_documented_bytes_per_second", "node", ns+"-b", "component", "device", "operation", "write", "source", "label")
		Expect(v).To(Equal(300e6))
		v, _ = of("warnings", "reason", v1alpha1.WarningBelowDocumented)
		Expect(v).To(BeNumerically(">=", 1))
		v, _ = of("status_phase", "phase", "Ready")
		Expect(v).To(Equal(1.0))
		v, _ = of("status_condition", "condition", "Ready", "status", "true")
		Expect(v).To(Equal(1.0))
		v, ok := of("workload_operations_per_second", "workload", lim.Workloads[2].Name)
		Expect(ok).To(BeTrue())
		Expect(v).To(Equal(float64(*lim.Workloads[2].OpsPerSecond)))
		for _, c := range []string{v1alpha1.ConditionLimitsEstimated, v1alpha1.ConditionProvisioned, v1alpha1.ConditionComponentsMeasured, v1alpha1.ConditionValidated} {
			_, ok := of("stage_duration_seconds", "condition", c)
			Expect(ok).To(BeTrue(), "%s", c)
		}
		var observed uint64
		for _, mf := range mfs {
			if mf.GetName() == bbmetrics.TimeToReadyName {
				for _, m := range mf.GetMetric() {
					observed += m.GetHistogram().GetSampleCount()
				}
			}
		}
		Expect(observed).To(BeNumerically(">=", 1), "this burst buffer's time to Ready")
	})
})
