package bbmetrics

import (
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

var created = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

func at(sec int) *metav1.Time {
	t := metav1.NewTime(created.Add(time.Duration(sec) * time.Second))
	return &t
}

func i64(v int64) *int64 { return &v }

func cond(typ string, status metav1.ConditionStatus, sec int) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: "R", LastTransitionTime: *at(sec)}
}

func base(engine v1alpha1.EngineType, profile v1alpha1.ValidationProfile) *v1alpha1.BurstBuffer {
	bb := &v1alpha1.BurstBuffer{}
	bb.Namespace, bb.Name, bb.UID = "jobs", "scratch", "uid-1"
	bb.CreationTimestamp = metav1.NewTime(created)
	bb.Spec.Engine = engine
	bb.Spec.Validation.Profile = profile
	return bb
}

// readyLocal is the testbed's device-bound burst buffer after the quick profile: two nodes,
// stage 1 from labels, stage 2 measured, the sweep, one straggler.
func readyLocal() *v1alpha1.BurstBuffer {
	bb := base(v1alpha1.EngineLocal, v1alpha1.ProfileQuick)
	capacity := resource.MustParse("7461Mi")
	link := resource.MustParse("1G")
	free := resource.MustParse("3730Mi")
	bb.Status = v1alpha1.BurstBufferStatus{
		Phase: v1alpha1.PhaseReady,
		Conditions: []metav1.Condition{
			cond(v1alpha1.ConditionLimitsEstimated, metav1.ConditionTrue, 1),
			cond(v1alpha1.ConditionProvisioned, metav1.ConditionTrue, 4),
			cond(v1alpha1.ConditionComponentsMeasured, metav1.ConditionTrue, 14),
			cond(v1alpha1.ConditionValidated, metav1.ConditionTrue, 31),
			cond(v1alpha1.ConditionReady, metav1.ConditionTrue, 31),
		},
		Nodes: []v1alpha1.NodeStatus{
			{Name: "worker-1", Hardware: &v1alpha1.NodeHardware{LinkBitsPerSecond: &link, LinkSource: "label", Capacity: &free}},
			{Name: "worker-2"},
		},
		Capacity:  &capacity,
		ReadyTime: at(31),
		Limits: &v1alpha1.LimitsStatus{
			Estimated: &v1alpha1.EstimatedLimits{
				Write: v1alpha1.OperationLimit{DevicesBytesPerSecond: i64(300e6), LimitBytesPerSecond: 300e6, Bottleneck: "devices"},
				Read:  v1alpha1.OperationLimit{DevicesBytesPerSecond: i64(600e6), LimitBytesPerSecond: 600e6, Bottleneck: "devices", ParallelismLimitProcesses: i64(8)},
			},
			Components: &v1alpha1.ComponentLimits{
				Nodes: []v1alpha1.NodeComponents{{
					Name:         "worker-1",
					Network:      &v1alpha1.ComponentFigure{MeasuredBytesPerSecond: i64(1.28e9)},
					DeviceWrite:  &v1alpha1.ComponentFigure{DocumentedBytesPerSecond: i64(150e6), MeasuredBytesPerSecond: i64(150742000), Source: "label"},
					MeasuredTime: at(12),
				}},
				Write: &v1alpha1.OperationLimit{DevicesBytesPerSecond: i64(303376000), LimitBytesPerSecond: 303376000, Bottleneck: "devices"},
			},
			Sweep: &v1alpha1.SweepLimits{
				Points: 4,
				Write: &v1alpha1.SweepResult{BestBytesPerSecond: 301583000, EfficiencyPerMille: 994,
					Best: v1alpha1.SweepPoint{Nodes: 2, ProcessesPerNode: 4}, Plateau: v1alpha1.SweepPoint{Nodes: 2, ProcessesPerNode: 1}},
			},
			Monitoring: &v1alpha1.MonitoringLimits{
				Nodes: []v1alpha1.NodeMonitoring{
					{Name: "worker-1", WriteBytesPerSecond: i64(151e6), DevicePeakBytesPerSecond: i64(158e6)},
					{Name: "worker-2", WriteBytesPerSecond: i64(100e6)},
				},
				Stragglers: []string{"worker-2"},
			},
		},
		Warnings: []v1alpha1.Warning{
			{Reason: v1alpha1.WarningStragglers, Message: "worker-2"},
			{Reason: v1alpha1.WarningBelowDocumented, Message: "a"},
			{Reason: v1alpha1.WarningBelowDocumented, Message: "b"},
		},
	}
	return bb
}

func lines(samples []Sample) []string {
	out := make([]string, len(samples))
	for i, s := range samples {
		out[i] = s.String()
	}
	sort.Strings(out)
	return out
}

func phaseLines(current v1alpha1.Phase) []string {
	var out []string
	for _, p := range phases {
		v := "0"
		if p == current {
			v = "1"
		}
		out = append(out, `beeburst_burstbuffer_status_phase{phase="`+string(p)+`"} `+v)
	}
	return out
}

func conditionLines(typ, status string) []string {
	var out []string
	for _, s := range []string{"false", "true", "unknown"} {
		v := "0"
		if s == status {
			v = "1"
		}
		out = append(out, `beeburst_burstbuffer_status_condition{condition="`+typ+`",status="`+s+`"} `+v)
	}
	return out
}

func TestSamples(t *testing.T) {
	tests := []struct {
		name string
		bb   *v1alpha1.BurstBuffer
		// want: every line (exact); else has and hasNot.
		want, has, hasNot []string
	}{
		{
			name: "just created: info and creation time only",
			bb:   base(v1alpha1.EngineLocal, v1alpha1.ProfileQuick),
			want: []string{
				`beeburst_burstbuffer_created_timestamp_seconds 1.795428e+09`,
				`beeburst_burstbuffer_info{engine="local",profile="quick",uid="uid-1"} 1`,
			},
		},
		{
			name: "Ready after the quick profile: every figure of the status",
			bb:   readyLocal(),
			want: slices.Concat(phaseLines(v1alpha1.PhaseReady),
				conditionLines("LimitsEstimated", "true"),
				conditionLines("Provisioned", "true"),
				conditionLines("ComponentsMeasured", "true"),
				conditionLines("Validated", "true"),
				conditionLines("Ready", "true"),
				[]string{
					`beeburst_burstbuffer_capacity_bytes 7.823425536e+09`,
					`beeburst_burstbuffer_created_timestamp_seconds 1.795428e+09`,
					`beeburst_burstbuffer_efficiency_ratio{operation="write",stage="sweep"} 0.994`,
					`beeburst_burstbuffer_info{engine="local",profile="quick",uid="uid-1"} 1`,
					`beeburst_burstbuffer_limit_bottleneck_info{bottleneck="devices",operation="read",stage="estimated"} 1`,
					`beeburst_burstbuffer_limit_bottleneck_info{bottleneck="devices",operation="write",stage="components"} 1`,
					`beeburst_burstbuffer_limit_bottleneck_info{bottleneck="devices",operation="write",stage="estimated"} 1`,
					`beeburst_burstbuffer_limit_bytes_per_second{operation="read",stage="estimated"} 6e+08`,
					`beeburst_burstbuffer_limit_bytes_per_second{operation="write",stage="components"} 3.03376e+08`,
					`beeburst_burstbuffer_limit_bytes_per_second{operation="write",stage="estimated"} 3e+08`,
					`beeburst_burstbuffer_limit_term_bytes_per_second{operation="read",stage="estimated",term="devices"} 6e+08`,
					`beeburst_burstbuffer_limit_term_bytes_per_second{operation="write",stage="components",term="devices"} 3.03376e+08`,
					`beeburst_burstbuffer_limit_term_bytes_per_second{operation="write",stage="estimated",term="devices"} 3e+08`,
					`beeburst_burstbuffer_measured_bytes_per_second{operation="write",stage="sweep"} 3.01583e+08`,
					`beeburst_burstbuffer_node_capacity_bytes{node="worker-1"} 3.91118848e+09`,
					`beeburst_burstbuffer_node_device_peak_bytes_per_second{node="worker-1"} 1.58e+08`,
					`beeburst_burstbuffer_node_documented_bytes_per_second{component="device",node="worker-1",operation="write",source="label"} 1.5e+08`,
					`beeburst_burstbuffer_node_link_bytes_per_second{node="worker-1",source="label"} 1.25e+08`,
					`beeburst_burstbuffer_node_measured_bytes_per_second{component="device",node="worker-1",operation="write"} 1.50742e+08`,
					`beeburst_burstbuffer_node_measured_bytes_per_second{component="network",node="worker-1",operation="transfer"} 1.28e+09`,
					`beeburst_burstbuffer_node_measured_timestamp_seconds{node="worker-1",reused="false"} 1.795428012e+09`,
					`beeburst_burstbuffer_node_straggler{node="worker-1"} 0`,
					`beeburst_burstbuffer_node_straggler{node="worker-2"} 1`,
					`beeburst_burstbuffer_node_write_bytes_per_second{node="worker-1"} 1.51e+08`,
					`beeburst_burstbuffer_node_write_bytes_per_second{node="worker-2"} 1e+08`,
					`beeburst_burstbuffer_nodes 2`,
					`beeburst_burstbuffer_parallelism_processes{operation="read",stage="estimated"} 8`,
					`beeburst_burstbuffer_ready_timestamp_seconds 1.795428031e+09`,
					`beeburst_burstbuffer_stage_duration_seconds{condition="ComponentsMeasured"} 10`,
					`beeburst_burstbuffer_stage_duration_seconds{condition="LimitsEstimated"} 1`,
					`beeburst_burstbuffer_stage_duration_seconds{condition="Provisioned"} 3`,
					`beeburst_burstbuffer_stage_duration_seconds{condition="Validated"} 17`,
					`beeburst_burstbuffer_sweep_point_nodes{operation="write",point="best"} 2`,
					`beeburst_burstbuffer_sweep_point_nodes{operation="write",point="plateau"} 2`,
					`beeburst_burstbuffer_sweep_point_processes_per_node{operation="write",point="best"} 4`,
					`beeburst_burstbuffer_sweep_point_processes_per_node{operation="write",point="plateau"} 1`,
					`beeburst_burstbuffer_sweep_points 4`,
					`beeburst_burstbuffer_warnings{reason="BelowDocumented"} 2`,
					`beeburst_burstbuffer_warnings{reason="Stragglers"} 1`,
				}),
		},
		{
			name: "an unknown limit has no series, not a zero",
			bb: func() *v1alpha1.BurstBuffer {
				bb := base(v1alpha1.EngineLocal, v1alpha1.ProfileNone)
				bb.Status.Limits = &v1alpha1.LimitsStatus{Estimated: &v1alpha1.EstimatedLimits{
					Write: v1alpha1.OperationLimit{Bottleneck: "unknown"},
					Read:  v1alpha1.OperationLimit{DevicesBytesPerSecond: i64(400e6), LimitBytesPerSecond: 400e6, Bottleneck: "devices"},
				}}
				return bb
			}(),
			has: []string{`beeburst_burstbuffer_limit_bytes_per_second{operation="read",stage="estimated"} 4e+08`},
			hasNot: []string{`beeburst_burstbuffer_limit_bytes_per_second{operation="write",stage="estimated"}`,
				`beeburst_burstbuffer_limit_bottleneck_info{bottleneck="unknown"`, `beeburst_burstbuffer_limit_term_bytes_per_second{operation="write"`},
		},
		{
			name: "beegfs: StorageBench targets, workloads, staging, a reused node, Failed",
			bb: func() *v1alpha1.BurstBuffer {
				bb := base(v1alpha1.EngineBeeGFS, v1alpha1.ProfileStandard)
				bb.Status.Phase = v1alpha1.PhaseFailed
				bb.Status.Limits = &v1alpha1.LimitsStatus{
					Components: &v1alpha1.ComponentLimits{
						Nodes: []v1alpha1.NodeComponents{{Name: "n1", StorageBenchWrite: &v1alpha1.ComponentFigure{MeasuredBytesPerSecond: i64(38e6)}, MeasuredTime: at(5), Reused: true}},
						StorageBench: &v1alpha1.StorageBenchSummary{Targets: []v1alpha1.StorageBenchTarget{
							{ID: 101, Node: "n1", WriteBytesPerSecond: 38e6, ReadBytesPerSecond: 79e6},
							{ID: 201, Node: "n2", WriteBytesPerSecond: 39e6},
						}},
					},
					Workloads: []v1alpha1.WorkloadResult{
						{Name: "metadata", Operation: "create", OpsPerSecond: i64(1200)},
						{Name: "sharedFile", Operation: "write", BytesPerSecond: i64(250e6), SharePercent: ptr.To(int32(83))},
					},
				}
				bb.Status.Workload = &v1alpha1.WorkloadStatus{GatedPods: []string{"a", "b"}, RunningPods: 1}
				bb.Status.StageIn = &v1alpha1.StageStatus{Bytes: 67100000, Files: 10, BytesPerSecond: 33e6}
				bb.Status.StageOut = &v1alpha1.StageStatus{}
				return bb
			}(),
			has: []string{
				`beeburst_burstbuffer_info{engine="beegfs",profile="standard",uid="uid-1"} 1`,
				`beeburst_burstbuffer_status_phase{phase="Failed"} 1`,
				`beeburst_burstbuffer_status_phase{phase="Ready"} 0`,
				`beeburst_burstbuffer_node_measured_bytes_per_second{component="storage_bench",node="n1",operation="write"} 3.8e+07`,
				`beeburst_burstbuffer_node_measured_timestamp_seconds{node="n1",reused="true"} 1.795428005e+09`,
				`beeburst_burstbuffer_storage_target_measured_bytes_per_second{node="n1",operation="read",target="101"} 7.9e+07`,
				`beeburst_burstbuffer_storage_target_measured_bytes_per_second{node="n2",operation="write",target="201"} 3.9e+07`,
				`beeburst_burstbuffer_workload_operations_per_second{operation="create",workload="metadata"} 1200`,
				`beeburst_burstbuffer_workload_bytes_per_second{operation="write",workload="sharedFile"} 2.5e+08`,
				`beeburst_burstbuffer_workload_limit_share_ratio{operation="write",workload="sharedFile"} 0.83`,
				`beeburst_burstbuffer_workload_pods{state="gated"} 2`,
				`beeburst_burstbuffer_workload_pods{state="running"} 1`,
				`beeburst_burstbuffer_workload_pods{state="completed"} 0`,
				`beeburst_burstbuffer_staged_bytes{direction="in"} 6.71e+07`,
				`beeburst_burstbuffer_staged_files{direction="in"} 10`,
				`beeburst_burstbuffer_staging_bytes_per_second{direction="in"} 3.3e+07`,
				`beeburst_burstbuffer_staged_bytes{direction="out"} 0`,
			},
			hasNot: []string{
				`beeburst_burstbuffer_storage_target_measured_bytes_per_second{node="n2",operation="read"`,
				`beeburst_burstbuffer_staging_bytes_per_second{direction="out"}`,
				`beeburst_burstbuffer_workload_bytes_per_second{operation="create"`,
				`beeburst_burstbuffer_ready_timestamp_seconds`,
			},
		},
		{
			name: "beegfs sized for a target, a chunk size chosen, compared with a claim, the devices probed twice",
			bb: func() *v1alpha1.BurstBuffer {
				bb := base(v1alpha1.EngineBeeGFS, v1alpha1.ProfileQuick)
				bb.Status.Limits = &v1alpha1.LimitsStatus{Components: &v1alpha1.ComponentLimits{DeviceProbeRound: 2}}
				bb.Status.Target = &v1alpha1.TargetStatus{
					State: v1alpha1.TargetMetState, Mode: v1alpha1.TargetChoose, NodeCount: 2, MetadataServers: 1,
					Write:    &v1alpha1.TargetBandwidth{TargetBytesPerSecond: 250e6, PredictedBytesPerSecond: i64(300e6)},
					Read:     &v1alpha1.TargetBandwidth{TargetBytesPerSecond: 1e9},
					Capacity: &v1alpha1.TargetCapacity{Target: resource.MustParse("4Gi")},
					Metadata: &v1alpha1.TargetMetadata{TargetOperationsPerSecond: 5000, MeasuredOperationsPerSecond: i64(6100)},
				}
				bb.Status.ChunkSize = &v1alpha1.ChunkSizeStatus{Size: resource.MustParse("1Mi"), Policy: v1alpha1.ChunkSizeAuto,
					Candidates: []v1alpha1.ChunkSizeCandidate{
						{Size: resource.MustParse("512Ki"), WriteBytesPerSecond: i64(280e6), ReadBytesPerSecond: i64(560e6)},
						{Size: resource.MustParse("1Mi"), WriteBytesPerSecond: i64(300e6), Chosen: true},
						{Size: resource.MustParse("64Ki"), WriteOpsPerSecond: i64(7000), ReadOpsPerSecond: i64(9000)},
					}}
				bb.Status.Comparison = &v1alpha1.ComparisonStatus{With: "claim results", Workload: "2 nodes x 4 processes",
					Operations: []v1alpha1.ComparedOperation{{Operation: "write", BurstBufferBytesPerSecond: i64(300e6), OtherBytesPerSecond: i64(100e6)}}}
				return bb
			}(),
			has: []string{
				`beeburst_burstbuffer_device_probe_round 2`,
				`beeburst_burstbuffer_target_state{state="Met"} 1`,
				`beeburst_burstbuffer_target_state{state="Predicted"} 0`,
				`beeburst_burstbuffer_target_nodes{mode="Choose"} 2`,
				`beeburst_burstbuffer_target_metadata_servers 1`,
				`beeburst_burstbuffer_target_bytes_per_second{operation="write"} 2.5e+08`,
				`beeburst_burstbuffer_target_bytes_per_second{operation="read"} 1e+09`,
				`beeburst_burstbuffer_target_predicted_bytes_per_second{operation="write"} 3e+08`,
				`beeburst_burstbuffer_target_capacity_bytes 4.294967296e+09`,
				`beeburst_burstbuffer_target_metadata_operations_per_second 5000`,
				`beeburst_burstbuffer_metadata_measured_operations_per_second 6100`,
				`beeburst_burstbuffer_chunk_size_bytes{policy="Auto"} 1.048576e+06`,
				`beeburst_burstbuffer_chunk_size_candidate_bytes_per_second{chunk_size="524288",operation="read"} 5.6e+08`,
				`beeburst_burstbuffer_chunk_size_candidate_bytes_per_second{chunk_size="1048576",operation="write"} 3e+08`,
				`beeburst_burstbuffer_chunk_size_candidate_operations_per_second{chunk_size="65536",operation="randread"} 9000`,
				`beeburst_burstbuffer_comparison_info{with="claim results",workload="2 nodes x 4 processes"} 1`,
				`beeburst_burstbuffer_comparison_bytes_per_second{operation="write",storage="burstbuffer"} 3e+08`,
				`beeburst_burstbuffer_comparison_bytes_per_second{operation="write",storage="other"} 1e+08`,
			},
			hasNot: []string{
				`beeburst_burstbuffer_target_predicted_bytes_per_second{operation="read"}`,
				`beeburst_burstbuffer_chunk_size_candidate_bytes_per_second{chunk_size="1048576",operation="read"}`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			samples := Samples(tt.bb)
			checkFamilies(t, samples)
			got := lines(samples)
			if tt.want != nil {
				want := append([]string{}, tt.want...)
				sort.Strings(want)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("samples differ:\n got: %s\nwant: %s\nmissing: %v\nextra: %v",
						strings.Join(got, "\n      "), strings.Join(want, "\n      "), minus(want, got), minus(got, want))
				}
			}
			for _, h := range tt.has {
				if !slices.Contains(got, h) {
					t.Errorf("missing %s in\n%s", h, strings.Join(got, "\n"))
				}
			}
			for _, h := range tt.hasNot {
				for _, g := range got {
					if strings.HasPrefix(g, h) {
						t.Errorf("unexpected %s", g)
					}
				}
			}
			if !reflect.DeepEqual(lines(Samples(tt.bb)), got) {
				t.Errorf("Samples is not deterministic")
			}
		})
	}
}

// checkFamilies: every sample belongs to a declared family and has exactly its labels, so
// the collector's const metrics never fail; no two samples are the same series.
func checkFamilies(t *testing.T, samples []Sample) {
	t.Helper()
	seen := map[string]bool{}
	for _, s := range samples {
		f, ok := Families[s.Name]
		if !ok {
			t.Errorf("%s: no such family", s.Name)
			continue
		}
		var keys []string
		for k := range s.Labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		want := append([]string{}, f.Labels...)
		sort.Strings(want)
		if !slices.Equal(keys, want) {
			t.Errorf("%s: labels %v, family has %v", s, keys, want)
		}
		series := s.String()[:strings.LastIndexByte(s.String(), ' ')]
		if seen[series] {
			t.Errorf("duplicate series %s", series)
		}
		seen[series] = true
	}
}

func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func TestStageDurations(t *testing.T) {
	tests := []struct {
		name  string
		conds []metav1.Condition
		want  map[string]float64
	}{
		{"nothing done yet", []metav1.Condition{cond(v1alpha1.ConditionLimitsEstimated, metav1.ConditionUnknown, 1)}, map[string]float64{}},
		{"in order, the running stage left out", []metav1.Condition{
			cond(v1alpha1.ConditionLimitsEstimated, metav1.ConditionTrue, 1),
			cond(v1alpha1.ConditionProvisioned, metav1.ConditionTrue, 5),
			cond(v1alpha1.ConditionComponentsMeasured, metav1.ConditionFalse, 5),
		}, map[string]float64{"LimitsEstimated": 1, "Provisioned": 4}},
		{"a skipped stage (profile none) takes 0 after the previous", []metav1.Condition{
			cond(v1alpha1.ConditionLimitsEstimated, metav1.ConditionTrue, 2),
			cond(v1alpha1.ConditionProvisioned, metav1.ConditionTrue, 6),
			cond(v1alpha1.ConditionComponentsMeasured, metav1.ConditionTrue, 6),
			cond(v1alpha1.ConditionValidated, metav1.ConditionTrue, 6),
			cond(v1alpha1.ConditionStagedIn, metav1.ConditionTrue, 9),
		}, map[string]float64{"LimitsEstimated": 2, "Provisioned": 4, "ComponentsMeasured": 0, "Validated": 0, "StagedIn": 3}},
		{"a condition that went True before the previous stage ended counts 0", []metav1.Condition{
			cond(v1alpha1.ConditionLimitsEstimated, metav1.ConditionTrue, 8),
			cond(v1alpha1.ConditionProvisioned, metav1.ConditionTrue, 3),
			cond(v1alpha1.ConditionComponentsMeasured, metav1.ConditionTrue, 10),
		}, map[string]float64{"LimitsEstimated": 8, "Provisioned": 0, "ComponentsMeasured": 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bb := base(v1alpha1.EngineLocal, v1alpha1.ProfileQuick)
			bb.Status.Conditions = tt.conds
			got := map[string]float64{}
			var sum time.Duration
			for _, d := range StageDurations(bb) {
				got[d.Condition] = d.Duration.Seconds()
				sum += d.Duration
				if d.End.Sub(d.Start) != d.Duration {
					t.Errorf("%s: %v to %v is not %v", d.Condition, d.Start, d.End, d.Duration)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestDocsListEveryFamily keeps docs/metrics.md true: every family is in its table.
func TestDocsListEveryFamily(t *testing.T) {
	doc, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	for name := range Families {
		if !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("docs/metrics.md does not list %s", name)
		}
	}
}
