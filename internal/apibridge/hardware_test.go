package apibridge

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/limits"
)

func i32(v int32) *int32 { return &v }
func q(s string) *resource.Quantity {
	v := resource.MustParse(s)
	return &v
}
func lnk(rate, enc string) *v1alpha1.LinkHardware {
	return &v1alpha1.LinkHardware{RateBitsPerSecond: *q(rate), Encoding: v1alpha1.LinkEncoding(enc)}
}

func omnipath() *v1alpha1.HardwareSpec {
	return &v1alpha1.HardwareSpec{
		Clients: &v1alpha1.ClientsHardware{Nodes: i32(64), ProcessesPerNode: i32(32), Link: lnk("100G", "64b/66b")},
		Servers: &v1alpha1.ServersHardware{Nodes: i32(5), Link: lnk("100G", "64b/66b")},
		Fabric:  &v1alpha1.FabricHardware{},
	}
}

func TestFromSpecWorkedExample(t *testing.T) {
	h, err := FromSpec(omnipath(), Defaults{Nodes: 1, Engine: v1alpha1.EngineBeeGFS})
	if err != nil {
		t.Fatal(err)
	}
	if h.Colocated || h.Local || len(h.Servers) != 5 || h.Clients.Nodes != 64 {
		t.Fatalf("hardware %+v", h)
	}
	lim, err := limits.Compute(h)
	if err != nil {
		t.Fatal(err)
	}
	api := EstimatedToAPI(lim, omnipath())
	if api.Write.LimitBytesPerSecond != 60606060606 || api.Write.Bottleneck != "servers" || api.Write.DevicesBytesPerSecond != nil ||
		*api.Write.ParallelismLimitProcesses != 160 {
		t.Errorf("API write limit %+v", api.Write)
	}
	if len(api.Sources) != 4 || api.Sources[0].Value != "100G 64b/66b" || api.Sources[2].Source != v1alpha1.SourceUnknown {
		t.Errorf("sources %+v", api.Sources)
	}
	sw, err := limits.AnalyzeSweep(h, lim, []limits.Point{{Nodes: 32, ProcessesPerNode: 32, Operation: limits.Write,
		BytesPerSecond: 50943.2e6}, {Nodes: 16, ProcessesPerNode: 8, Operation: limits.Write, BytesPerSecond: 50011.2e6}},
		limits.SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := SweepToAPI(sw)
	if s.Write == nil || s.Write.EfficiencyPerMille != 841 || s.Write.BestBytesPerSecond != 50943200000 ||
		s.Write.Plateau != (v1alpha1.SweepPoint{Nodes: 16, ProcessesPerNode: 8}) || s.Read != nil || s.Points != 2 {
		t.Errorf("sweep %+v %+v", s, s.Write)
	}
	// A sweep above its limit is not published.
	sw.Write.ExceedsLimit = true
	if SweepResultToAPI(sw.Write) != nil {
		t.Error("published a sweep that exceeded its limit")
	}
	ws := WarningsToAPI(lim.Warnings)
	if len(ws) != 2 || ws[0].Reason != v1alpha1.WarningUnknownLimit || ws[0].Operation != "write" || ws[0].Component != "devices" {
		t.Errorf("warnings %+v", ws)
	}
}

func TestFromSpec(t *testing.T) {
	bb := Defaults{Nodes: 4, Engine: v1alpha1.EngineBeeGFS}
	for _, tc := range []struct {
		name      string
		hw        *v1alpha1.HardwareSpec
		d         Defaults
		colocated bool
		local     bool
		servers   int
		clientBps float64
		devWrite  float64
		note      string
	}{
		{
			name: "counts from the burst buffer: co-located inferred, link shared",
			hw:   &v1alpha1.HardwareSpec{Servers: &v1alpha1.ServersHardware{Link: lnk("25G", "")}},
			d:    bb, colocated: true, servers: 4, clientBps: 25e9 / 8, note: "co-located inferred",
		},
		{
			name: "different counts: not co-located",
			hw:   &v1alpha1.HardwareSpec{Clients: &v1alpha1.ClientsHardware{Nodes: i32(8), Link: lnk("12.5G", "8b/10b")}, Servers: &v1alpha1.ServersHardware{Link: lnk("100Gi", "none")}},
			d:    bb, servers: 4, clientBps: 12.5e9 * 0.8 / 8, note: "cannot be the same nodes",
		},
		{
			name: "explicit co-located fills the other side's count",
			hw: &v1alpha1.HardwareSpec{Colocated: ptr.To(true), Clients: &v1alpha1.ClientsHardware{Nodes: i32(3), Link: lnk("1e11", "none")},
				Devices: &v1alpha1.DevicesHardware{PerNode: 2, WriteBytesPerSecond: q("3G")}},
			colocated: true, servers: 3, clientBps: 12.5e9, devWrite: 3e9,
		},
		{
			name:  "local engine",
			hw:    &v1alpha1.HardwareSpec{Devices: &v1alpha1.DevicesHardware{WriteBytesPerSecond: q("512Mi")}},
			d:     Defaults{Nodes: 2, Engine: v1alpha1.EngineLocal},
			local: true, servers: 2, devWrite: 512 * 1024 * 1024,
		},
		{
			name: "nil hardware, single node", d: Defaults{Nodes: 1}, colocated: true, servers: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := FromSpec(tc.hw, tc.d)
			if err != nil {
				t.Fatal(err)
			}
			if h.Colocated != tc.colocated || h.Local != tc.local || len(h.Servers) != tc.servers {
				t.Errorf("colocated %v local %v servers %d", h.Colocated, h.Local, len(h.Servers))
			}
			if tc.clientBps != 0 && (h.Clients.Link.Value() != tc.clientBps || h.Servers[0].Link.Value() == 0) {
				t.Errorf("client link %v server link %v, want %g", h.Clients.Link, h.Servers[0].Link, tc.clientBps)
			}
			if tc.devWrite != 0 && h.Servers[0].DeviceWrite.Value() != tc.devWrite {
				t.Errorf("device write %v, want %g", h.Servers[0].DeviceWrite, tc.devWrite)
			}
			if tc.note != "" && !strings.Contains(strings.Join(h.Notes, "\n"), tc.note) {
				t.Errorf("notes %q lack %q", h.Notes, tc.note)
			}
			if _, err := limits.Compute(h); err != nil {
				t.Errorf("Compute: %v", err)
			}
		})
	}
}

func TestFromSpecInvalid(t *testing.T) {
	for _, tc := range []struct {
		name string
		hw   *v1alpha1.HardwareSpec
		d    Defaults
		want string
	}{
		{"unknown encoding", &v1alpha1.HardwareSpec{Servers: &v1alpha1.ServersHardware{Link: lnk("100G", "64b/65b")}},
			Defaults{Nodes: 2}, `hardware.servers.link.encoding: unknown link encoding "64b/65b"`},
		{"zero nodes", &v1alpha1.HardwareSpec{Clients: &v1alpha1.ClientsHardware{Nodes: i32(0)}}, Defaults{Nodes: 2},
			"hardware.clients.nodes must be at least 1"},
		{"no count to default to", &v1alpha1.HardwareSpec{Clients: &v1alpha1.ClientsHardware{Nodes: i32(2)}}, Defaults{},
			"hardware.servers.nodes is not given"},
		{"zero rate", &v1alpha1.HardwareSpec{Servers: &v1alpha1.ServersHardware{Link: lnk("0", "none")}}, Defaults{Nodes: 2},
			"rateBitsPerSecond must be greater than zero"},
		{"negative device", &v1alpha1.HardwareSpec{Devices: &v1alpha1.DevicesHardware{ReadBytesPerSecond: q("-1G")}}, Defaults{Nodes: 1},
			"devices.readBytesPerSecond must be greater than zero"},
		{"co-located counts differ", &v1alpha1.HardwareSpec{Colocated: ptr.To(true), Clients: &v1alpha1.ClientsHardware{Nodes: i32(2)},
			Servers: &v1alpha1.ServersHardware{Nodes: i32(3)}}, Defaults{}, "must be equal"},
		{"co-located links differ", &v1alpha1.HardwareSpec{Clients: &v1alpha1.ClientsHardware{Link: lnk("100G", "none")},
			Servers: &v1alpha1.ServersHardware{Link: lnk("25G", "none")}}, Defaults{Nodes: 2}, "differ"},
		{"no links", nil, Defaults{Nodes: 2}, "clients.link"},
		{"negative service traffic", &v1alpha1.HardwareSpec{Servers: &v1alpha1.ServersHardware{Link: lnk("100G", "none")},
			Fabric: &v1alpha1.FabricHardware{ServiceTrafficBitsPerSecond: q("-1")}}, Defaults{Nodes: 2}, "must not be negative"},
		{"local counts differ", &v1alpha1.HardwareSpec{Clients: &v1alpha1.ClientsHardware{Nodes: i32(2)}, Servers: &v1alpha1.ServersHardware{Nodes: i32(3)}},
			Defaults{Engine: v1alpha1.EngineLocal}, "must agree"},
		{"too many servers", &v1alpha1.HardwareSpec{Servers: &v1alpha1.ServersHardware{Nodes: i32(1 << 30), Link: lnk("1G", "none")}},
			Defaults{Nodes: 1}, "servers.nodes must be from 1 to"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := FromSpec(tc.hw, tc.d)
			if err == nil {
				_, err = limits.Compute(h)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestDefaultsFor(t *testing.T) {
	d := DefaultsFor(&v1alpha1.BurstBuffer{})
	if d.Nodes != 1 || d.Engine != v1alpha1.EngineBeeGFS {
		t.Errorf("defaults %+v", d)
	}
	bb := &v1alpha1.BurstBuffer{Spec: v1alpha1.BurstBufferSpec{Engine: v1alpha1.EngineLocal, Nodes: v1alpha1.NodesSpec{Count: 3},
		Hardware: &v1alpha1.HardwareSpec{Devices: &v1alpha1.DevicesHardware{WriteBytesPerSecond: q("1G"), ReadBytesPerSecond: q("2G")}}}}
	h, err := FromSpec(bb.Spec.Hardware, DefaultsFor(bb))
	if err != nil {
		t.Fatal(err)
	}
	lim, err := limits.Compute(h)
	if err != nil {
		t.Fatal(err)
	}
	api := OperationLimitToAPI(lim.Read)
	if api.LimitBytesPerSecond != 6e9 || api.Bottleneck != "devices" || api.ClientsBytesPerSecond != nil || api.ParallelismLimitProcesses != nil {
		t.Errorf("local read %+v", api)
	}
}
