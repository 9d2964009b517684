package bbmetrics

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

func fakeReader(t *testing.T, objs ...client.Object) client.WithWatch {
	t.Helper()
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
}

func gather(t *testing.T, c prometheus.Collector) map[string]*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

func histogramCount(mfs map[string]*dto.MetricFamily) uint64 {
	var n uint64
	if mf := mfs[TimeToReadyName]; mf != nil {
		for _, m := range mf.GetMetric() {
			n += m.GetHistogram().GetSampleCount()
		}
	}
	return n
}

func TestCollector(t *testing.T) {
	start := created.Add(-time.Minute)
	ready := readyLocal() // Ready 31 s after creation, after the collector started
	ready.Name, ready.UID = "a", "uid-a"
	old := readyLocal() // Ready before the collector started: counted by an earlier process
	old.Name, old.UID = "old", "uid-old"
	old.Status.ReadyTime = &metav1.Time{Time: start.Add(-time.Hour)}
	pending := base(v1alpha1.EngineBeeGFS, v1alpha1.ProfileNone)
	pending.Name, pending.UID = "b", "uid-b"
	r := fakeReader(t, ready, old, pending)
	c := NewCollector(r, Options{Now: start})

	mfs := gather(t, c)
	limit := mfs[Prefix+"limit_bytes_per_second"]
	if limit == nil || len(limit.GetMetric()) != 6 {
		t.Fatalf("limit_bytes_per_second: %v", limit)
	}
	m := limit.GetMetric()[0]
	labels := map[string]string{}
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	if labels["namespace"] != "jobs" || labels["burstbuffer"] == "" || labels["stage"] == "" || labels["operation"] == "" {
		t.Errorf("labels %v", labels)
	}
	if got := len(mfs[Prefix+"info"].GetMetric()); got != 3 {
		t.Errorf("info series: %d, want 3", got)
	}
	if n := histogramCount(mfs); n != 1 {
		t.Errorf("time to Ready observed %d times, want 1 (only the burst buffer that became Ready after the start)", n)
	}
	h := mfs[TimeToReadyName].GetMetric()[0].GetHistogram()
	if h.GetSampleSum() != 31 {
		t.Errorf("time to Ready sum %v, want 31", h.GetSampleSum())
	}
	// A second scrape does not observe it again.
	if n := histogramCount(gather(t, c)); n != 1 {
		t.Errorf("after a second scrape: %d observations, want 1", n)
	}
	// Deleted, it is forgotten; nothing is observed twice.
	if err := r.Delete(context.Background(), ready); err != nil {
		t.Fatal(err)
	}
	mfs = gather(t, c)
	if n := histogramCount(mfs); n != 1 {
		t.Errorf("after deletion: %d observations, want 1", n)
	}
	if len(c.observed) != 0 {
		t.Errorf("observed UIDs kept after deletion: %v", c.observed)
	}
	if got := len(mfs[Prefix+"info"].GetMetric()); got != 2 {
		t.Errorf("info series after deletion: %d, want 2", got)
	}

	problems, err := testutil.CollectAndLint(NewCollector(r, Options{Now: start}))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

func TestCollectorStandby(t *testing.T) {
	elected := make(chan struct{})
	c := NewCollector(fakeReader(t, readyLocal()), Options{Elected: elected, Now: created})
	if mfs := gather(t, c); mfs[Prefix+"info"] != nil {
		t.Errorf("a standby replica published burst buffers")
	}
	close(elected)
	if mfs := gather(t, c); mfs[Prefix+"info"] == nil || histogramCount(mfs) != 1 {
		t.Errorf("the leader published nothing")
	}
}

func TestCollectorListError(t *testing.T) {
	r := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
			return errors.New("cache not started")
		},
	}).Build()
	c := NewCollector(r, Options{})
	gather(t, c)
	mfs := gather(t, c)
	if got := mfs["beeburst_metrics_list_errors_total"].GetMetric()[0].GetCounter().GetValue(); got != 2 {
		t.Errorf("list errors %v, want 2", got)
	}
	for name := range mfs {
		if strings.HasPrefix(name, Prefix) && name != TimeToReadyName {
			t.Errorf("%s published after a failed list", name)
		}
	}
}
