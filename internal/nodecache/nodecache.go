// Package nodecache keeps a node's stage-2 (component) figures between burst buffers, so that
// back-to-back jobs on the same node do not probe it again. Figures live in one ConfigMap per
// node in the operator's namespace; this package builds and reads those ConfigMaps, and Store
// reads and writes them through a client.
package nodecache

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/beeburst/beeburst/internal/bench"
)

// Key is the ConfigMap data key.
const Key = "components.json"

// Figures are one node's measured component figures. Zero means not measured.
type Figures struct {
	Node string `json:"node"`
	// NodeUID is the Node object's UID when they were measured: a machine that registers again
	// under the same name (a replaced cloud instance) is another node, whose figures these
	// are not.
	NodeUID string `json:"nodeUID,omitempty"`
	// StoragePath is the node-local path the device figures were measured on: a figure of
	// another path (another drive) must not be reused.
	StoragePath  string    `json:"storagePath"`
	MeasuredTime time.Time `json:"measuredTime"`
	// Method is how the devices were probed (nodetask.DeviceProbeMethod): figures of another
	// method are not reused.
	Method                    string `json:"method,omitempty"`
	DeviceWriteBytesPerSecond int64  `json:"deviceWriteBytesPerSecond,omitempty"`
	DeviceReadBytesPerSecond  int64  `json:"deviceReadBytesPerSecond,omitempty"`
	NetworkBytesPerSecond     int64  `json:"networkBytesPerSecond,omitempty"`
	// FreeBytes is the space that was free on the storage path when it was probed.
	FreeBytes int64 `json:"freeBytes,omitempty"`
	// MeasuredBy names the burst buffer whose probe measured them (namespace/name).
	MeasuredBy string `json:"measuredBy,omitempty"`
	// Hardware is what the same probe discovered on the node (link speed, device model), so
	// that a reused result brings it along.
	Hardware *bench.Hardware `json:"hardware,omitempty"`
	// Conditions say under which conditions the figures were taken. Figures without them
	// (written by an operator before they existed) are never reused.
	Conditions *Conditions `json:"conditions,omitempty"`
	// Metadata is the per-metadata-server file-create rate of a metadata benchmark in which
	// this node ran a metadata server. It has its own time, author and conditions: it was
	// measured by another run (stage 3's workload benchmarks, not stage 2's probe), often by
	// another burst buffer than the device figures beside it.
	Metadata *MetadataFigure `json:"metadata,omitempty"`
	// Doubted says why a burst buffer's second look doubted the device figures (a sweep above
	// their limit, a figure far from what the device is known to do) and measured them again;
	// "" when none did. Doubted figures are not reused: a second round beside other work is
	// not cached, and would otherwise leave the figure it was to settle reusable. A probe
	// that had the node to itself replaces them (Next). Best keeps them: it is the best of
	// every such probe.
	Doubted string `json:"doubted,omitempty"`
	// Best is the highest device figures of every probe of StoragePath that had the node to
	// itself: what its device is known to do. Interference a probe cannot see (work outside
	// Kubernetes, a busy shared disk) only lowers a figure, so the best of several probes is
	// the node's own evidence of its hardware - closer to it than a datasheet, which drives
	// often miss by some percent.
	Best *BestFigures `json:"best,omitempty"`
}

// BestFigures are a node's highest device figures on one storage path.
type BestFigures struct {
	StoragePath         string `json:"storagePath"`
	WriteBytesPerSecond int64  `json:"writeBytesPerSecond"`
	ReadBytesPerSecond  int64  `json:"readBytesPerSecond"`
	// Probes is how many probes they are the best of.
	Probes int `json:"probes"`
}

// Next is what a node's entry holds once a probe that had the node to itself measured f,
// where it held prev: f's figures, prev's metadata figure (another measurement's), and the
// best of prev's and f's device figures on f's storage path (a new path, or another Node
// object under the same name, starts anew; an entry that names none is taken as this node's). The same probe written again (a later visit of its
// burst buffer) is not counted twice.
func Next(prev, f Figures) Figures {
	if prev.NodeUID != "" && prev.NodeUID != f.NodeUID {
		prev = Figures{}
	}
	best := BestFigures{StoragePath: f.StoragePath}
	if b := prev.Best; b != nil && b.StoragePath == f.StoragePath {
		best = *b
	}
	best.WriteBytesPerSecond = max(best.WriteBytesPerSecond, f.DeviceWriteBytesPerSecond)
	best.ReadBytesPerSecond = max(best.ReadBytesPerSecond, f.DeviceReadBytesPerSecond)
	if best.Probes == 0 || prev.MeasuredBy != f.MeasuredBy || !prev.MeasuredTime.Equal(f.MeasuredTime) {
		best.Probes++
	}
	f.Metadata, f.Best = prev.Metadata, &best
	return f
}

// KnownBest is the node's best device figures on storagePath as evidence beside a probe of
// the burst buffer self (namespace/name): only when they include a probe of another burst
// buffer, or more than one probe - a lone probe's own figure cannot vouch for itself.
func (f Figures) KnownBest(storagePath, self string) (BestFigures, bool) {
	b := f.Best
	if b == nil || b.StoragePath != storagePath || b.Probes < 1 || (b.Probes < 2 && f.MeasuredBy == self) {
		return BestFigures{}, false
	}
	return *b, true
}

// MetadataFigure is what a BeeGFS metadata benchmark (validation profile standard) measured,
// per metadata server: the aggregate file creates per second over all clients, divided by the
// burst buffer's metadata servers - what spec.target.metadataOperationsPerSecond sizes the
// next burst buffer's metadata servers from, assuming they scale linearly.
type MetadataFigure struct {
	CreatesPerSecondPerServer int64 `json:"createsPerSecondPerServer"`
	// Servers is how many metadata servers the benchmark ran against (the rate is the
	// aggregate over them divided by Servers).
	Servers int `json:"servers"`
	// StoragePath is where the metadata server kept its data: a figure of another drive is
	// not reused.
	StoragePath  string    `json:"storagePath"`
	MeasuredTime time.Time `json:"measuredTime"`
	// MeasuredBy names the burst buffer whose benchmark measured it (namespace/name).
	MeasuredBy string `json:"measuredBy,omitempty"`
	// Conditions are the benchmark's over all of its burst buffer's nodes (each ran clients
	// against the metadata servers, so another burst buffer's work on any of them counts).
	// Only a figure whose benchmark had every node to itself is written.
	Conditions *Conditions `json:"conditions,omitempty"`
}

// Fresh says whether m can stand for a measurement of metadata servers on storagePath at
// now: by the same rule as the device figures (young enough, same path, taken alone).
func (m *MetadataFigure) Fresh(storagePath string, maxAge time.Duration, now time.Time) bool {
	return m != nil && m.Usable(storagePath) && maxAge > 0 && now.Sub(m.MeasuredTime) < maxAge && !m.MeasuredTime.After(now)
}

// Usable says whether m is evidence at all for storagePath, whatever its age: a rate, of the
// same path, taken alone.
func (m *MetadataFigure) Usable(storagePath string) bool {
	return m != nil && m.CreatesPerSecondPerServer > 0 && m.Servers > 0 && m.StoragePath == storagePath && m.Conditions.Alone()
}

// Conditions are the circumstances of a probe.
type Conditions struct {
	// StartTime is when the probe's container started (MeasuredTime is when it ended).
	StartTime time.Time `json:"startTime"`
	// Exclusive: the probe ran while its burst buffer held the node's measuring lock, so no
	// other burst buffer measured the node at the same time.
	Exclusive bool `json:"exclusive"`
	// Lock is the node's measuring Lease.
	Lock string `json:"lock,omitempty"`
	// OtherPods are other beeburst pods (other burst buffers' tasks and workloads) that ran
	// on the node while the probe ran. Figures with any are not kept for reuse; the list is
	// part of the record for the burst buffer that published them.
	OtherPods []string `json:"otherPods,omitempty"`
	// OtherTraffic says what the node's device (a link probe: the interface its client sent
	// through) moved beside the probe that the probe did not (another burst buffer's BeeGFS
	// service serving its clients elsewhere, any other work on the device or link); "" when
	// nothing. Figures with any are not kept for reuse either.
	OtherTraffic string `json:"otherTraffic,omitempty"`
	// Probe is how the device was measured (tool and arguments), and Image the agent image
	// that ran it: a figure of another method is not the same figure.
	Probe string `json:"probe,omitempty"`
	Image string `json:"image,omitempty"`
}

// Alone says whether the probe had the node to itself.
func (c *Conditions) Alone() bool {
	return c != nil && c.Exclusive && len(c.OtherPods) == 0 && c.OtherTraffic == ""
}

// Together are the conditions of one measurement that ran on several nodes at once (a
// metadata benchmark: clients on every node): from the first start, exclusive only when every
// part held its node's lock, every other pod seen beside any part, the locks and methods
// joined. A part with no conditions recorded makes the whole not exclusive. Nil for no parts.
func Together(parts []*Conditions) *Conditions {
	if len(parts) == 0 {
		return nil
	}
	out := &Conditions{Exclusive: true}
	var locks, probes, images, traffic []string
	for _, c := range parts {
		if c == nil {
			out.Exclusive = false
			continue
		}
		if out.StartTime.IsZero() || (!c.StartTime.IsZero() && c.StartTime.Before(out.StartTime)) {
			out.StartTime = c.StartTime
		}
		out.Exclusive = out.Exclusive && c.Exclusive
		out.OtherPods = append(out.OtherPods, c.OtherPods...)
		locks, probes, images = appendNew(locks, c.Lock), appendNew(probes, c.Probe), appendNew(images, c.Image)
		traffic = appendNew(traffic, c.OtherTraffic)
	}
	sort.Strings(out.OtherPods)
	out.OtherPods = slices.Compact(out.OtherPods)
	out.Lock, out.Probe, out.Image = strings.Join(locks, ","), strings.Join(probes, "; "), strings.Join(images, ",")
	out.OtherTraffic = strings.Join(traffic, "; ")
	return out
}

func appendNew(list []string, s string) []string {
	if s == "" || slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// Name is the ConfigMap's name for a node.
func Name(node string) string { return "beeburst-node-" + node }

// ConfigMap builds the ConfigMap holding f.
func ConfigMap(namespace string, f Figures) (*corev1.ConfigMap, error) {
	b, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name: Name(f.Node), Namespace: namespace,
			Labels: map[string]string{
				"app.kubernetes.io/name":       "beeburst",
				"app.kubernetes.io/component":  "node-figures",
				"app.kubernetes.io/managed-by": "beeburst-operator",
			},
		},
		Data: map[string]string{Key: string(b)},
	}, nil
}

// Read returns the figures in cm.
func Read(cm *corev1.ConfigMap) (Figures, error) {
	var f Figures
	raw, ok := cm.Data[Key]
	if !ok {
		return f, fmt.Errorf("configmap %s has no %s", cm.Name, Key)
	}
	if err := json.Unmarshal([]byte(raw), &f); err != nil {
		return f, fmt.Errorf("configmap %s: %w", cm.Name, err)
	}
	return f, nil
}

// Fresh says whether f can stand for a new probe of storagePath at now: young enough, of
// the same path, and taken by a probe that had the node to itself, not doubted since.
func (f Figures) Fresh(storagePath string, maxAge time.Duration, now time.Time) bool {
	return maxAge > 0 && f.StoragePath == storagePath && f.DeviceWriteBytesPerSecond > 0 &&
		f.DeviceReadBytesPerSecond > 0 && now.Sub(f.MeasuredTime) < maxAge && !f.MeasuredTime.After(now) &&
		f.Trusted()
}

// Trusted says whether f's device figures are evidence of the node: taken by a probe that had
// the node to itself, and not doubted by a second look since.
func (f Figures) Trusted() bool {
	return f.Conditions.Alone() && f.Doubted == ""
}

// MetadataFromReports is the per-server figure of a metadata benchmark: the best single
// node's file creates per second (each node ran its clients alone against all metadata
// servers, one node after another) divided by servers, and when the last report ended (zero
// when no report says). Not the sum over the nodes, which the status shows: the nodes never
// ran at once, so the sum is a rate nobody measured, and a per-server figure taken from it
// would size too few servers when one node's clients already kept them busy. The best single
// run is what the servers delivered at once: a lower bound, which errs towards one server
// more. False when a report has no create rate.
func MetadataFromReports(reports []bench.Report, servers int) (perServer int64, end time.Time, ok bool) {
	if servers < 1 || len(reports) == 0 {
		return 0, time.Time{}, false
	}
	best := 0.0
	for _, rep := range reports {
		creates := 0.0
		for _, res := range rep.Results {
			if res.Operation == bench.OpCreate {
				creates += res.OpsPerSecond
			}
		}
		if !(creates > 0) {
			return 0, time.Time{}, false
		}
		best = max(best, creates)
		if rep.EndTime.After(end) {
			end = rep.EndTime
		}
	}
	perServer = int64(best / float64(servers))
	return perServer, end, perServer > 0
}
