package bbmetrics

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// TimeToReadyName is the histogram of the time from creation to Ready.
const TimeToReadyName = Prefix + "time_to_ready_seconds"

// TimeToReadyBuckets cover a burst buffer without measurements (seconds) to a standard
// profile on many nodes (an hour).
var TimeToReadyBuckets = []float64{5, 10, 20, 30, 45, 60, 90, 120, 180, 300, 600, 900, 1800, 3600}

// Collector is a prometheus.Collector that reads BurstBuffers at scrape time, as
// kube-state-metrics does: register it with controller-runtime's metrics.Registry and give
// it the manager's cache as Reader, so a scrape costs a list from memory and the reconcile
// loop does nothing for metrics.
type Collector struct {
	reader  client.Reader
	elected <-chan struct{}
	started time.Time
	timeout time.Duration
	log     logr.Logger

	descs       map[string]*prometheus.Desc
	timeToReady *prometheus.HistogramVec
	listErrors  prometheus.Counter

	mu sync.Mutex
	// observed are the UIDs whose time to Ready the histogram holds; a UID is dropped once
	// its burst buffer is gone (UIDs are never reused).
	observed map[types.UID]bool
}

// Options of a Collector.
type Options struct {
	// Elected closes when this replica leads (the manager's Elected()). Until then the
	// collector publishes no burst buffer: a standby replica would repeat the leader's
	// series. Nil: always publish.
	Elected <-chan struct{}
	// Timeout bounds the list of one scrape (default 10 s).
	Timeout time.Duration
	// Log gets list failures.
	Log logr.Logger
	// Now is when the collector counts from (default time.Now()): the histogram observes
	// burst buffers that became Ready at or after it, so a restarted manager does not count
	// again those an earlier process counted.
	Now time.Time
}

// NewCollector returns a collector that lists BurstBuffers through reader.
func NewCollector(reader client.Reader, o Options) *Collector {
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	c := &Collector{
		reader: reader, elected: o.Elected, started: o.Now.Truncate(time.Second), timeout: o.Timeout, log: o.Log,
		descs:    map[string]*prometheus.Desc{},
		observed: map[types.UID]bool{},
		timeToReady: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: TimeToReadyName,
			Help: "Time from a burst buffer's creation to its first Ready, observed once per burst buffer that became Ready while this manager ran.",
			// Whole seconds: creation and ready times have the API's resolution.
			Buckets: TimeToReadyBuckets,
		}, []string{"engine", "profile"}),
		listErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "beeburst_metrics_list_errors_total",
			Help: "Scrapes whose list of BurstBuffers failed (their burst buffer series are missing).",
		}),
	}
	for name, f := range Families {
		c.descs[name] = prometheus.NewDesc(name, f.Help, append(append([]string{}, commonLabels...), f.Labels...), nil)
	}
	return c
}

// Describe sends every family's description.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
	c.timeToReady.Describe(ch)
	c.listErrors.Describe(ch)
}

// Collect lists the burst buffers and sends their samples.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	defer func() {
		c.timeToReady.Collect(ch)
		c.listErrors.Collect(ch)
	}()
	if c.elected != nil {
		select {
		case <-c.elected:
		default:
			return
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	var list v1alpha1.BurstBufferList
	if err := c.reader.List(ctx, &list); err != nil {
		c.listErrors.Inc()
		c.log.Error(err, "cannot list BurstBuffers for the metrics")
		return
	}
	sort.Slice(list.Items, func(i, j int) bool {
		a, b := &list.Items[i], &list.Items[j]
		return a.Namespace < b.Namespace || a.Namespace == b.Namespace && a.Name < b.Name
	})
	for i := range list.Items {
		bb := &list.Items[i]
		seen := map[string]bool{}
		for _, s := range Samples(bb) {
			// Status lists are keyed by the API, so a duplicate series means a status the API
			// should not have let through; one duplicate would fail the whole scrape.
			key := s.String()
			if seen[key] {
				continue
			}
			seen[key] = true
			m, err := prometheus.NewConstMetric(c.descs[s.Name], prometheus.GaugeValue, s.Value, s.LabelValues(bb.Namespace, bb.Name)...)
			if err != nil {
				c.log.Error(err, "cannot publish a metric", "metric", s.Name, "namespace", bb.Namespace, "name", bb.Name)
				continue
			}
			ch <- m
		}
	}
	c.observeTimeToReady(list.Items)
}

// observeTimeToReady observes, once each, the burst buffers that became Ready since the
// collector started, and forgets those that are gone.
func (c *Collector) observeTimeToReady(items []v1alpha1.BurstBuffer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	present := map[types.UID]bool{}
	for i := range items {
		bb := &items[i]
		present[bb.UID] = true
		rt := bb.Status.ReadyTime
		if rt == nil || c.observed[bb.UID] || rt.Time.Before(c.started) {
			continue
		}
		c.observed[bb.UID] = true
		d := rt.Sub(bb.CreationTimestamp.Time).Seconds()
		if d < 0 {
			d = 0
		}
		c.timeToReady.WithLabelValues(string(bb.Spec.Engine), string(bb.Spec.Validation.Profile)).Observe(d)
	}
	for uid := range c.observed {
		if !present[uid] {
			delete(c.observed, uid)
		}
	}
}
