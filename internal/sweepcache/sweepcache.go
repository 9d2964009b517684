// Package sweepcache keeps a burst buffer's validation - stage 2's components and stage 3's
// sweep - for the next burst buffer built the same way on the same nodes, so that it can be
// Ready in seconds instead of measuring again (validation.reuseSweep). Pure functions: the
// controller reads and writes the ConfigMap they describe.
//
// A record is kept only from a validation that measured everything with the nodes to itself
// (no point disturbed, nothing cut short or refused), and it is used only by a burst buffer
// whose configuration has the same key: the same nodes, storage path, engine, layout, profile
// and sweep grid. Its age is bounded by validation.reuseComponentResultsFor.
package sweepcache

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/nodetask"
)

// Component is the records' component label.
const Component = "validation-cache"

// dataKey is the ConfigMap key of the record.
const dataKey = "validation.json"

// Record is one burst buffer's validation, as published in its status.
type Record struct {
	// Key is the configuration it was measured for (Key).
	Key string `json:"key"`
	// MeasuredBy is namespace/name of the burst buffer that measured it.
	MeasuredBy string `json:"measuredBy"`
	// MeasuredTime is when its validation ended.
	MeasuredTime metav1.Time `json:"measuredTime"`

	Components *v1alpha1.ComponentLimits  `json:"components"`
	Sweep      *v1alpha1.SweepLimits      `json:"sweep"`
	Monitoring *v1alpha1.MonitoringLimits `json:"monitoring,omitempty"`
	// Warnings are the validation's findings (components under their documented figure,
	// stragglers, low efficiency): they hold for the reusing burst buffer too.
	Warnings []v1alpha1.Warning `json:"warnings,omitempty"`
	// Hardware is what the device probes discovered on each node.
	Hardware map[string]*v1alpha1.NodeHardware `json:"hardware,omitempty"`
	// Capacity is the burst buffer's capacity over its nodes as the probes saw it.
	Capacity *resource.Quantity `json:"capacity,omitempty"`
	// SweepCSV is the full sweep (the sweep ConfigMap's content).
	SweepCSV string `json:"sweepCSV,omitempty"`
}

// Key is the configuration a validation measured: the nodes (as the caller names them; the
// controller gives name/UID, so that a machine registered again under a name is another),
// where the data lives, the file system's shape and what was measured, and how its findings
// were judged (the efficiency and straggler thresholds behind the warnings a reuse copies).
// Two burst buffers with the same key would measure the same hardware the same way. The local
// engine's nodes count in any order; the beegfs engine's in theirs, which places its services
// (beegfs.PlacementFor: the management service on the first node, the metadata servers on the
// first ones), and so does all of spec.beegfs (the images are the BeeGFS release measured).
func Key(bb *v1alpha1.BurstBuffer, nodes []string) string {
	ordered := append([]string(nil), nodes...)
	if bb.Spec.Engine != v1alpha1.EngineBeeGFS {
		sort.Strings(ordered)
	}
	spec := struct {
		Engine            v1alpha1.EngineType
		Nodes             []string
		Storage           v1alpha1.StorageSpec
		Layout            v1alpha1.LayoutSpec
		Profile           v1alpha1.ValidationProfile
		Sweep             *v1alpha1.SweepSpec
		Hardware          *v1alpha1.HardwareSpec
		BeeGFS            *v1alpha1.BeeGFSSpec `json:",omitempty"`
		MinimumEfficiency int32                `json:",omitempty"`
		Straggler         int32                `json:",omitempty"`
	}{bb.Spec.Engine, ordered, bb.Spec.Storage, bb.Spec.Layout, bb.Spec.Validation.Profile, bb.Spec.Validation.Sweep, bb.Spec.Hardware,
		bb.Spec.BeeGFS, bb.Spec.Validation.MinimumEfficiencyPercent, bb.Spec.Validation.StragglerPercent}
	b, _ := json.Marshal(spec)
	return nodetask.Hash(string(b))
}

// Name is the ConfigMap of a key's record, in the operator's namespace.
func Name(key string) string { return "beeburst-validation-" + key }

// Eligible says why bb may not reuse a validation ("" when it may): the profile, the spec's
// switch and window, and what the record could not stand for (a chunk size tuned on this file
// system, a comparison with other storage).
func Eligible(bb *v1alpha1.BurstBuffer, maxAge time.Duration) string {
	v := bb.Spec.Validation
	switch {
	case v.ReuseSweep != nil && !*v.ReuseSweep:
		return "validation.reuseSweep is false"
	case maxAge <= 0:
		return "validation.reuseComponentResultsFor is 0s"
	case v.Profile != v1alpha1.ProfileQuick:
		return "only the quick profile reuses a sweep"
	case bb.Spec.Layout.ChunkSizePolicy == v1alpha1.ChunkSizeAuto:
		return "layout.chunkSizePolicy Auto tunes this file system"
	case v.CompareWith != nil:
		return "validation.compareWith measures other storage beside it"
	}
	return ""
}

// Keepable says why a finished validation is not kept for reuse ("" when it is): only one
// that measured every point with the nodes to itself, in full and within its limits.
func Keepable(bb *v1alpha1.BurstBuffer) string {
	l := bb.Status.Limits
	switch {
	case l == nil || l.Components == nil || l.Sweep == nil:
		return "not measured in full"
	case l.Components.ReusedFrom != nil || l.Sweep.ReusedFrom != nil:
		return "reused itself"
	case l.Sweep.CutShort:
		return "the time budget cut the sweep short"
	case l.Sweep.Write == nil || l.Sweep.Read == nil:
		return "the sweep has no valid limit"
	}
	for _, w := range bb.Status.Warnings {
		switch w.Reason {
		case v1alpha1.WarningExceedsLimit, v1alpha1.WarningValidationCutShort, v1alpha1.WarningNodeBusy:
			return "warning " + w.Reason + ": " + w.Message
		}
	}
	return ""
}

// New is bb's validation as a record, from its status, measured at now.
func New(bb *v1alpha1.BurstBuffer, nodes []string, sweepCSV string, now time.Time) Record {
	r := Record{
		Key: Key(bb, nodes), MeasuredBy: bb.Namespace + "/" + bb.Name, MeasuredTime: metav1.NewTime(now.Truncate(time.Second)),
		Components: bb.Status.Limits.Components.DeepCopy(), Sweep: bb.Status.Limits.Sweep.DeepCopy(),
		Monitoring: bb.Status.Limits.Monitoring.DeepCopy(), SweepCSV: sweepCSV, Hardware: map[string]*v1alpha1.NodeHardware{},
	}
	if bb.Status.Capacity != nil {
		c := bb.Status.Capacity.DeepCopy()
		r.Capacity = &c
	}
	for _, w := range bb.Status.Warnings {
		if w.Reason != v1alpha1.WarningValidationCutShort {
			r.Warnings = append(r.Warnings, w)
		}
	}
	for _, n := range bb.Status.Nodes {
		if n.Hardware != nil {
			r.Hardware[n.Name] = n.Hardware.DeepCopy()
		}
	}
	r.Sweep.ConfigMapName = ""
	return r
}

// Fresh says whether a record may stand for key's validation at now: the validation and every
// node's component figures in it are no older than maxAge (a validation may have reused
// device figures older than itself from the per-node cache, within its own window).
func (r Record) Fresh(key string, maxAge time.Duration, now time.Time) bool {
	young := func(t time.Time) bool { return now.Sub(t) <= maxAge && !t.After(now.Add(time.Minute)) }
	if r.Key != key || r.Components == nil || r.Sweep == nil || r.MeasuredTime.IsZero() || !young(r.MeasuredTime.Time) {
		return false
	}
	for _, n := range r.Components.Nodes {
		if n.MeasuredTime != nil && !young(n.MeasuredTime.Time) {
			return false
		}
	}
	return true
}

// MaxAge is the oldest a record can be and still stand for a validation: the longest
// validation.reuseComponentResultsFor the API admits.
const MaxAge = v1alpha1.MaxReuseComponentResultsFor

// Expired says whether a record's ConfigMap can go at now: its validation is older than
// MaxAge, so no burst buffer may reuse it. One that cannot be read goes once its object is
// older than MaxAge: nothing can reuse it either, and a record of a newer release that a
// rolled-back operator cannot read is kept as long as it could be fresh.
func Expired(cm *corev1.ConfigMap, now time.Time) bool {
	r, err := FromConfigMap(cm)
	if err != nil {
		return now.Sub(cm.CreationTimestamp.Time) > MaxAge
	}
	return now.Sub(r.MeasuredTime.Time) > MaxAge
}

// Source is the reused figures' mark.
func (r Record) Source() *v1alpha1.ReusedFrom {
	return &v1alpha1.ReusedFrom{BurstBuffer: r.MeasuredBy, MeasuredTime: r.MeasuredTime}
}

// Describe says what was reused, for the conditions.
func (r Record) Describe(now time.Time) string {
	return fmt.Sprintf("reused from burst buffer %s, validated %s ago on the same nodes, storage, layout, sweep grid and settings",
		r.MeasuredBy, now.Sub(r.MeasuredTime.Time).Round(time.Second))
}

// ConfigMap is the record's object in namespace ns.
func ConfigMap(ns string, r Record) (*corev1.ConfigMap, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	by := strings.ReplaceAll(r.MeasuredBy, "/", ".")
	if len(by) > 63 {
		by = by[:63]
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name: Name(r.Key), Namespace: ns,
			Labels: map[string]string{
				nodetask.LabelName: "beeburst", nodetask.LabelComponent: Component, nodetask.LabelManagedBy: nodetask.ManagedBy,
			},
			Annotations: map[string]string{"beeburst.io/measured-by": r.MeasuredBy},
		},
		Data: map[string]string{dataKey: string(b)},
	}, nil
}

// FromConfigMap reads a record.
func FromConfigMap(cm *corev1.ConfigMap) (Record, error) {
	var r Record
	raw, ok := cm.Data[dataKey]
	if !ok {
		return r, fmt.Errorf("ConfigMap %s has no %s", cm.Name, dataKey)
	}
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		return r, fmt.Errorf("ConfigMap %s: %w", cm.Name, err)
	}
	return r, nil
}
