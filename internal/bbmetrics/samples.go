// Package bbmetrics publishes every figure of a BurstBuffer's status as Prometheus metrics, the
// way kube-state-metrics publishes the state of built-in objects: a collector reads the
// burst buffers from the manager's cache at scrape time (Collector), and a pure function
// maps one burst buffer to its samples (Samples), so the reconcile loop does nothing for
// metrics.
//
// Naming follows kube-state-metrics and the Prometheus conventions: the prefix
// beeburst_burstbuffer_, the unit in the name (_bytes_per_second, _bytes, _seconds,
// _timestamp_seconds, _ratio), every series labelled namespace and burstbuffer, state as
// 0/1 series per possible value (status_phase, status_condition), and _info series with
// value 1 that carry descriptive labels. Stage labels use the status's own words: stage
// "estimated" (stage 1, status.limits.estimated), "components" (stage 2), "sweep" (stage 3).
// A figure the status does not have (unknown, not measured yet) has no series: absence
// means unknown, never zero.
package bbmetrics

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// Prefix of every metric of this package.
const Prefix = "beeburst_burstbuffer_"

// Labels every per-burst-buffer series carries, in this order, before its family's own.
var commonLabels = []string{"namespace", "burstbuffer"}

// Family is one metric family: its help text and the labels it has besides namespace and
// burstbuffer, in order.
type Family struct {
	Help   string
	Labels []string
}

// Families are every per-burst-buffer family Samples produces, by full name. The collector
// describes them up front; a test checks every sample matches its family.
var Families = map[string]Family{
	Prefix + "info":                      {"Information about a burst buffer: engine, validation profile, UID. Always 1.", []string{"engine", "profile", "uid"}},
	Prefix + "status_phase":              {"The burst buffer's phase: 1 for the current phase, 0 for every other.", []string{"phase"}},
	Prefix + "status_condition":          {"The burst buffer's conditions: 1 for the condition's status (true, false, unknown), 0 for the other two.", []string{"condition", "status"}},
	Prefix + "created_timestamp_seconds": {"Unix time the burst buffer was created.", nil},
	Prefix + "ready_timestamp_seconds":   {"Unix time the burst buffer first became Ready (status.readyTime).", nil},
	Prefix + "stage_duration_seconds":    {"Time each stage took on the way to Ready, from the end of the previous stage (creation for the first) to the last transition of its condition to True. Whole seconds (the API's time resolution).", []string{"condition"}},
	Prefix + "nodes":                     {"Number of nodes carrying the burst buffer.", nil},
	Prefix + "capacity_bytes":            {"Total space of the burst buffer over all its nodes.", nil},
	Prefix + "limit_bytes_per_second":    {"Limit of an operation at a stage: estimated (stage 1, from the documented hardware) or components (stage 2, from the measured components). Absent when unknown.", []string{"stage", "operation"}},
	Prefix + "limit_term_bytes_per_second": {"One term of a stage's limit: clients (Bc), servers (Bs), network (Bnet) or devices (Bd). The limit is the smallest.",
		[]string{"stage", "operation", "term"}},
	Prefix + "limit_bottleneck_info":              {"The term that bounds an operation's limit at a stage. Always 1.", []string{"stage", "operation", "bottleneck"}},
	Prefix + "parallelism_processes":              {"P: the client processes it takes to saturate the burst buffer, by stage and operation.", []string{"stage", "operation"}},
	Prefix + "measured_bytes_per_second":          {"Best aggregate bandwidth measured by the ideal-workload sweep (stage 3, B).", []string{"stage", "operation"}},
	Prefix + "efficiency_ratio":                   {"Measured bandwidth over the limit it is held against (stage 3: B / limit).", []string{"stage", "operation"}},
	Prefix + "sweep_points":                       {"Grid points measured by the stage-3 sweep.", nil},
	Prefix + "sweep_point_nodes":                  {"Nodes (M) of a notable point of the sweep: best (where B was measured) or plateau (the smallest point within 95% of B).", []string{"operation", "point"}},
	Prefix + "sweep_point_processes_per_node":     {"Processes per node (N) of a notable point of the sweep: best or plateau.", []string{"operation", "point"}},
	Prefix + "node_documented_bytes_per_second":   {"A node's documented component figure (stage 2 compares it with the measurement), with its source: spec, label or discovered.", []string{"node", "component", "operation", "source"}},
	Prefix + "node_measured_bytes_per_second":     {"A node's component as measured in stage 2: network (iperf3), device (fio), storage_bench (BeeGFS StorageBench).", []string{"node", "component", "operation"}},
	Prefix + "node_measured_timestamp_seconds":    {"Unix time a node's stage-2 figures were measured; reused is true when they came from an earlier burst buffer on the node.", []string{"node", "reused"}},
	Prefix + "node_link_bytes_per_second":         {"A node's link rate as stage 1 uses it (status.nodes[].hardware.linkBitsPerSecond / 8), with its source (spec, label, discovered).", []string{"node", "source"}},
	Prefix + "node_capacity_bytes":                {"Size of the file system at spec.storage.path on a node, as the device probe read it.", []string{"node"}},
	Prefix + "node_write_bytes_per_second":        {"Stage 4: what a node's processes wrote during the sweep's best point.", []string{"node"}},
	Prefix + "node_network_peak_bytes_per_second": {"Stage 4: a node's busiest interface's peak (sent plus received) during the sweep's best point.", []string{"node"}},
	Prefix + "node_device_peak_bytes_per_second":  {"Stage 4: a node's busiest device's peak (read plus written) during the sweep's best point.", []string{"node"}},
	Prefix + "node_straggler":                     {"Stage 4: 1 when a node is well below the median of the burst buffer's nodes, else 0.", []string{"node"}},
	Prefix + "storage_target_measured_bytes_per_second": {"A BeeGFS storage target as StorageBench measured it on its storage server (stage 2, beegfs engine).",
		[]string{"node", "target", "operation"}},
	Prefix + "workload_bytes_per_second":      {"Bandwidth of a workload benchmark (standard profile: sharedFile, random4k).", []string{"workload", "operation"}},
	Prefix + "workload_operations_per_second": {"Operation rate of a workload benchmark (standard profile: metadata, random4k).", []string{"workload", "operation"}},
	Prefix + "workload_limit_share_ratio":     {"A workload benchmark's result as a share of the stage-3 limit of its operation.", []string{"workload", "operation"}},
	Prefix + "workload_pods":                  {"The burst buffer's workload pods by state: gated (held by the scheduling gate), running, completed.", []string{"state"}},
	Prefix + "staged_bytes":                   {"Bytes copied by stage-in or stage-out so far.", []string{"direction"}},
	Prefix + "staged_files":                   {"Files copied by stage-in or stage-out so far.", []string{"direction"}},
	Prefix + "staging_bytes_per_second":       {"Copy rate of stage-in or stage-out.", []string{"direction"}},
	Prefix + "warnings":                       {"Warnings in the status, by reason (BelowDocumented, ExceedsLimit, Stragglers, ...).", []string{"reason"}},
	Prefix + "device_probe_round":             {"Rounds of stage 2's device probes: 2 when the devices were measured a second time (a sweep figure above their first round's limit, or a device far below what it is known to do).", nil},
	Prefix + "target_state":                   {"The verdict on spec.target: 1 for the current state (Predicted, Met, NotMet, Unreachable, Unknown), 0 for every other.", []string{"state"}},
	Prefix + "target_nodes":                   {"Nodes chosen for spec.target (mode Choose) or given by nodes.count (mode Check).", []string{"mode"}},
	Prefix + "target_metadata_servers":        {"Metadata servers chosen for spec.target (beegfs engine).", nil},
	Prefix + "target_bytes_per_second":        {"spec.target's bandwidth for an operation.", []string{"operation"}},
	Prefix + "target_predicted_bytes_per_second": {"The stage-1 limit of the nodes chosen for spec.target, for an operation; stage 3's figure is measured_bytes_per_second.",
		[]string{"operation"}},
	Prefix + "target_capacity_bytes":                   {"spec.target's capacity.", nil},
	Prefix + "target_metadata_operations_per_second":   {"spec.target's metadata rate (file creates per second).", nil},
	Prefix + "metadata_measured_operations_per_second": {"File creates per second the metadata benchmark measured for spec.target (beegfs engine).", nil},
	Prefix + "chunk_size_bytes":                        {"Stripe chunk size of the file system's root, with layout.chunkSizePolicy (Fixed, Auto).", []string{"policy"}},
	Prefix + "chunk_size_candidate_bytes_per_second": {"layout.chunkSizePolicy Auto: bandwidth of one chunk size's short run, by operation.",
		[]string{"chunk_size", "operation"}},
	Prefix + "chunk_size_candidate_operations_per_second": {"layout.chunkSizePolicy Auto: operation rate of one chunk size's short run (small random I/O), by operation.",
		[]string{"chunk_size", "operation"}},
	Prefix + "comparison_bytes_per_second": {"validation.compareWith: the same ideal workload on the burst buffer (storage burstbuffer) and on the other storage (storage other, named by comparison_info).",
		[]string{"operation", "storage"}},
	Prefix + "comparison_info": {"validation.compareWith: the other storage and the workload run on both. Always 1.", []string{"with", "workload"}},
}

// Sample is one series of one burst buffer: a family's name, its own labels (namespace and
// burstbuffer are added by LabelValues) and the value.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// LabelValues are the sample's label values in its family's order, namespace and
// burstbuffer first.
func (s Sample) LabelValues(namespace, name string) []string {
	vals := []string{namespace, name}
	for _, l := range Families[s.Name].Labels {
		vals = append(vals, s.Labels[l])
	}
	return vals
}

// String writes the sample as the Prometheus text format would (labels sorted, without
// namespace and burstbuffer), for tests and debugging.
func (s Sample) String() string {
	keys := make([]string, 0, len(s.Labels))
	for k := range s.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(s.Name)
	if len(keys) > 0 {
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%s=%q", k, s.Labels[k])
		}
		b.WriteByte('}')
	}
	b.WriteByte(' ')
	b.WriteString(strconv.FormatFloat(s.Value, 'g', -1, 64))
	return b.String()
}

// Stage label values.
const (
	StageEstimated  = "estimated"
	StageComponents = "components"
	StageSweep      = "sweep"
)

// phases are every phase a burst buffer can be in, for the 0/1 series of status_phase.
var phases = []v1alpha1.Phase{
	v1alpha1.PhasePending, v1alpha1.PhaseProvisioning, v1alpha1.PhaseMeasuring, v1alpha1.PhaseStagingIn,
	v1alpha1.PhaseReady, v1alpha1.PhaseStagingOut, v1alpha1.PhaseTearingDown, v1alpha1.PhaseDegraded,
	v1alpha1.PhaseFailed, v1alpha1.PhaseStageOutFailed,
}

// Samples maps a burst buffer to its series. It is pure: the same object gives the same
// samples, in the same order.
func Samples(bb *v1alpha1.BurstBuffer) []Sample {
	var out samples
	add, addInt := out.add, out.addInt
	boolValue := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	st := &bb.Status

	add("info", 1, "engine", string(bb.Spec.Engine), "profile", string(bb.Spec.Validation.Profile), "uid", string(bb.UID))
	if st.Phase != "" {
		for _, p := range phases {
			add("status_phase", boolValue(p == st.Phase), "phase", string(p))
		}
	}
	for _, c := range st.Conditions {
		for _, s := range []metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown} {
			add("status_condition", boolValue(c.Status == s), "condition", c.Type, "status", strings.ToLower(string(s)))
		}
	}
	if !bb.CreationTimestamp.IsZero() {
		add("created_timestamp_seconds", float64(bb.CreationTimestamp.Unix()))
	}
	if st.ReadyTime != nil {
		add("ready_timestamp_seconds", float64(st.ReadyTime.Unix()))
	}
	for _, d := range StageDurations(bb) {
		add("stage_duration_seconds", d.Duration.Seconds(), "condition", d.Condition)
	}
	if len(st.Nodes) > 0 {
		add("nodes", float64(len(st.Nodes)))
	}
	if st.Capacity != nil {
		add("capacity_bytes", float64(st.Capacity.Value()))
	}

	if l := st.Limits; l != nil {
		limit := func(stage, op string, ol *v1alpha1.OperationLimit) {
			if ol == nil {
				return
			}
			if ol.LimitBytesPerSecond > 0 {
				add("limit_bytes_per_second", float64(ol.LimitBytesPerSecond), "stage", stage, "operation", op)
			}
			addInt("limit_term_bytes_per_second", ol.ClientsBytesPerSecond, "stage", stage, "operation", op, "term", "clients")
			addInt("limit_term_bytes_per_second", ol.ServersBytesPerSecond, "stage", stage, "operation", op, "term", "servers")
			addInt("limit_term_bytes_per_second", ol.NetworkBytesPerSecond, "stage", stage, "operation", op, "term", "network")
			addInt("limit_term_bytes_per_second", ol.DevicesBytesPerSecond, "stage", stage, "operation", op, "term", "devices")
			if ol.Bottleneck != "" && ol.LimitBytesPerSecond > 0 {
				add("limit_bottleneck_info", 1, "stage", stage, "operation", op, "bottleneck", ol.Bottleneck)
			}
			addInt("parallelism_processes", ol.ParallelismLimitProcesses, "stage", stage, "operation", op)
		}
		if e := l.Estimated; e != nil {
			limit(StageEstimated, "write", &e.Write)
			limit(StageEstimated, "read", &e.Read)
		}
		if c := l.Components; c != nil {
			limit(StageComponents, "write", c.Write)
			limit(StageComponents, "read", c.Read)
			for _, n := range c.Nodes {
				figure := func(component, op string, f *v1alpha1.ComponentFigure) {
					if f == nil {
						return
					}
					if f.DocumentedBytesPerSecond != nil {
						add("node_documented_bytes_per_second", float64(*f.DocumentedBytesPerSecond),
							"node", n.Name, "component", component, "operation", op, "source", f.Source)
					}
					addInt("node_measured_bytes_per_second", f.MeasuredBytesPerSecond, "node", n.Name, "component", component, "operation", op)
				}
				figure("network", "transfer", n.Network)
				figure("device", "write", n.DeviceWrite)
				figure("device", "read", n.DeviceRead)
				figure("storage_bench", "write", n.StorageBenchWrite)
				figure("storage_bench", "read", n.StorageBenchRead)
				if n.MeasuredTime != nil {
					add("node_measured_timestamp_seconds", float64(n.MeasuredTime.Unix()), "node", n.Name, "reused", strconv.FormatBool(n.Reused))
				}
			}
			if sb := c.StorageBench; sb != nil {
				for _, t := range sb.Targets {
					id := strconv.Itoa(int(t.ID))
					if t.WriteBytesPerSecond > 0 {
						add("storage_target_measured_bytes_per_second", float64(t.WriteBytesPerSecond), "node", t.Node, "target", id, "operation", "write")
					}
					if t.ReadBytesPerSecond > 0 {
						add("storage_target_measured_bytes_per_second", float64(t.ReadBytesPerSecond), "node", t.Node, "target", id, "operation", "read")
					}
				}
			}
		}
		if s := l.Sweep; s != nil {
			for _, r := range []struct {
				op  string
				res *v1alpha1.SweepResult
			}{{"write", s.Write}, {"read", s.Read}} {
				if r.res == nil {
					continue
				}
				add("measured_bytes_per_second", float64(r.res.BestBytesPerSecond), "stage", StageSweep, "operation", r.op)
				add("efficiency_ratio", float64(r.res.EfficiencyPerMille)/1000, "stage", StageSweep, "operation", r.op)
				addInt("parallelism_processes", r.res.ParallelismLimitProcesses, "stage", StageSweep, "operation", r.op)
				for _, p := range []struct {
					name string
					pt   v1alpha1.SweepPoint
				}{{"best", r.res.Best}, {"plateau", r.res.Plateau}} {
					if p.pt.Nodes > 0 {
						add("sweep_point_nodes", float64(p.pt.Nodes), "operation", r.op, "point", p.name)
						add("sweep_point_processes_per_node", float64(p.pt.ProcessesPerNode), "operation", r.op, "point", p.name)
					}
				}
			}
			if s.Points > 0 {
				add("sweep_points", float64(s.Points))
			}
		}
		if m := l.Monitoring; m != nil {
			for _, n := range m.Nodes {
				addInt("node_write_bytes_per_second", n.WriteBytesPerSecond, "node", n.Name)
				addInt("node_network_peak_bytes_per_second", n.NetworkPeakBytesPerSecond, "node", n.Name)
				addInt("node_device_peak_bytes_per_second", n.DevicePeakBytesPerSecond, "node", n.Name)
				add("node_straggler", boolValue(contains(m.Stragglers, n.Name)), "node", n.Name)
			}
		}
		for _, w := range l.Workloads {
			addInt("workload_bytes_per_second", w.BytesPerSecond, "workload", w.Name, "operation", w.Operation)
			addInt("workload_operations_per_second", w.OpsPerSecond, "workload", w.Name, "operation", w.Operation)
			if w.SharePercent != nil {
				add("workload_limit_share_ratio", float64(*w.SharePercent)/100, "workload", w.Name, "operation", w.Operation)
			}
		}
	}

	for _, n := range st.Nodes {
		if h := n.Hardware; h != nil {
			if h.LinkBitsPerSecond != nil {
				add("node_link_bytes_per_second", float64(h.LinkBitsPerSecond.Value())/8, "node", n.Name, "source", h.LinkSource)
			}
			if h.Capacity != nil {
				add("node_capacity_bytes", float64(h.Capacity.Value()), "node", n.Name)
			}
		}
	}
	if w := st.Workload; w != nil {
		add("workload_pods", float64(len(w.GatedPods)), "state", "gated")
		add("workload_pods", float64(w.RunningPods), "state", "running")
		add("workload_pods", float64(w.CompletedPods), "state", "completed")
	}
	for _, s := range []struct {
		dir string
		st  *v1alpha1.StageStatus
	}{{"in", st.StageIn}, {"out", st.StageOut}} {
		if s.st == nil {
			continue
		}
		add("staged_bytes", float64(s.st.Bytes), "direction", s.dir)
		add("staged_files", float64(s.st.Files), "direction", s.dir)
		if s.st.BytesPerSecond > 0 {
			add("staging_bytes_per_second", float64(s.st.BytesPerSecond), "direction", s.dir)
		}
	}
	if l := st.Limits; l != nil && l.Components != nil && l.Components.DeviceProbeRound > 0 {
		add("device_probe_round", float64(l.Components.DeviceProbeRound))
	}
	sizingSamples(&out, bb)
	warnings := map[string]int{}
	var reasons []string
	for _, w := range st.Warnings {
		if warnings[w.Reason] == 0 {
			reasons = append(reasons, w.Reason)
		}
		warnings[w.Reason]++
	}
	sort.Strings(reasons)
	for _, r := range reasons {
		add("warnings", float64(warnings[r]), "reason", r)
	}
	return out
}

// targetStates are every state of status.target, for the 0/1 series of target_state.
var targetStates = []v1alpha1.TargetState{
	v1alpha1.TargetPredicted, v1alpha1.TargetMetState, v1alpha1.TargetNotMet, v1alpha1.TargetUnreachable, v1alpha1.TargetUnknown,
}

// samples collects the series of one burst buffer.
type samples []Sample

// add appends the series name (without Prefix) with its own labels as key, value pairs.
func (s *samples) add(name string, v float64, kv ...string) {
	l := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		l[kv[i]] = kv[i+1]
	}
	*s = append(*s, Sample{Name: Prefix + name, Labels: l, Value: v})
}

// addInt appends the series when the status has the figure: absence means unknown.
func (s *samples) addInt(name string, v *int64, kv ...string) {
	if v != nil {
		s.add(name, float64(*v), kv...)
	}
}

// sizingSamples adds the series of what was sized or compared for the user: status.target,
// status.chunkSize and status.comparison.
func sizingSamples(out *samples, bb *v1alpha1.BurstBuffer) {
	add, addInt := out.add, out.addInt
	st := &bb.Status
	if t := st.Target; t != nil {
		for _, s := range targetStates {
			v := 0.0
			if s == t.State {
				v = 1
			}
			add("target_state", v, "state", string(s))
		}
		if t.NodeCount > 0 {
			add("target_nodes", float64(t.NodeCount), "mode", string(t.Mode))
		}
		if t.MetadataServers > 0 {
			add("target_metadata_servers", float64(t.MetadataServers))
		}
		for _, b := range []struct {
			op string
			tb *v1alpha1.TargetBandwidth
		}{{"write", t.Write}, {"read", t.Read}} {
			if b.tb == nil {
				continue
			}
			add("target_bytes_per_second", float64(b.tb.TargetBytesPerSecond), "operation", b.op)
			addInt("target_predicted_bytes_per_second", b.tb.PredictedBytesPerSecond, "operation", b.op)
		}
		if c := t.Capacity; c != nil {
			add("target_capacity_bytes", float64(c.Target.Value()))
		}
		if m := t.Metadata; m != nil {
			add("target_metadata_operations_per_second", float64(m.TargetOperationsPerSecond))
			addInt("metadata_measured_operations_per_second", m.MeasuredOperationsPerSecond)
		}
	}
	if c := st.ChunkSize; c != nil {
		add("chunk_size_bytes", float64(c.Size.Value()), "policy", string(c.Policy))
		for _, cand := range c.Candidates {
			size := strconv.FormatInt(cand.Size.Value(), 10)
			addInt("chunk_size_candidate_bytes_per_second", cand.WriteBytesPerSecond, "chunk_size", size, "operation", "write")
			addInt("chunk_size_candidate_bytes_per_second", cand.ReadBytesPerSecond, "chunk_size", size, "operation", "read")
			addInt("chunk_size_candidate_operations_per_second", cand.WriteOpsPerSecond, "chunk_size", size, "operation", "randwrite")
			addInt("chunk_size_candidate_operations_per_second", cand.ReadOpsPerSecond, "chunk_size", size, "operation", "randread")
		}
	}
	if c := st.Comparison; c != nil {
		add("comparison_info", 1, "with", c.With, "workload", c.Workload)
		for _, op := range c.Operations {
			addInt("comparison_bytes_per_second", op.BurstBufferBytesPerSecond, "operation", op.Operation, "storage", "burstbuffer")
			addInt("comparison_bytes_per_second", op.OtherBytesPerSecond, "operation", op.Operation, "storage", "other")
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// StageDuration is the time one stage took on the way to Ready.
type StageDuration struct {
	// Condition is the stage's condition type (LimitsEstimated, Provisioned, ...).
	Condition string
	// Start is the end of the previous stage (the creation time for the first), End the last
	// transition of the condition to True.
	Start, End time.Time
	Duration   time.Duration
}

// stageConditions are the conditions of the stages a burst buffer passes on its way to Ready,
// in the order the operator runs them (nodes are chosen before stage 1 is estimated, so
// LimitsEstimated includes the choice).
var stageConditions = []string{
	v1alpha1.ConditionLimitsEstimated, v1alpha1.ConditionProvisioned, v1alpha1.ConditionComponentsMeasured,
	v1alpha1.ConditionValidated, v1alpha1.ConditionStagedIn,
}

// StageDurations are the durations of the stages that are done (their condition True), in
// order: each from the end of the previous done stage (the creation for the first) to its
// condition's last transition to True. A stage that became True before the previous one
// ended (a condition that flipped back and forth) counts 0. Times have the API's resolution,
// whole seconds.
func StageDurations(bb *v1alpha1.BurstBuffer) []StageDuration {
	var out []StageDuration
	prev := bb.CreationTimestamp.Time
	for _, t := range stageConditions {
		c := meta.FindStatusCondition(bb.Status.Conditions, t)
		if c == nil || c.Status != metav1.ConditionTrue {
			continue
		}
		end := c.LastTransitionTime.Time
		d := StageDuration{Condition: t, Start: prev, End: end}
		if end.After(prev) {
			d.Duration = end.Sub(prev)
			prev = end
		} else {
			d.End = prev
		}
		out = append(out, d)
	}
	return out
}
