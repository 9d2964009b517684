package monitor

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseCapturedSamples(t *testing.T) {
	n1, err := ParseNetDev(mustRead(t, "netdev-1.txt"))
	if err != nil {
		t.Fatal(err)
	}
	n2, err := ParseNetDev(mustRead(t, "netdev-2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(n2) != 4 || n2["lo"].In != 7691536091 || n2["eth0"].Out != 1919124 {
		t.Fatalf("netdev-2: %+v", n2)
	}
	d1, err := ParseDiskstats(mustRead(t, "diskstats-1.txt"))
	if err != nil {
		t.Fatal(err)
	}
	d2, err := ParseDiskstats(mustRead(t, "diskstats-2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// Between the samples: 200 MiB written with dd (direct) to vda, about 1 s of iperf3 on lo.
	t0 := time.Unix(1000, 0)
	snaps := []Snapshot{{Time: t0, Interfaces: n1, Devices: d1}, {Time: t0.Add(2 * time.Second), Interfaces: n2, Devices: d2}}
	s := Summarize(snaps, 2*time.Second, true)
	if len(s.Devices) == 0 || s.Devices[0].Name != "vda" {
		t.Fatalf("devices %+v", s.Devices)
	}
	vda := s.Devices[0]
	if written := vda.OutMeanBytesPerSecond * 2; written < 200<<20 {
		t.Errorf("vda written %v bytes, want >= 200 MiB", written)
	}
	if vda.PeakBytesPerSecond != vda.MeanBytesPerSecond || len(vda.Intervals) != 1 {
		t.Errorf("one interval: peak %v mean %v intervals %v", vda.PeakBytesPerSecond, vda.MeanBytesPerSecond, vda.Intervals)
	}
	if s.Interfaces[0].Name != "lo" || s.Interfaces[0].InMeanBytesPerSecond != s.Interfaces[0].OutMeanBytesPerSecond {
		t.Errorf("interfaces %+v", s.Interfaces)
	}
	for _, d := range s.Devices {
		if strings.HasPrefix(d.Name, "loop") {
			t.Errorf("idle device %s reported", d.Name)
		}
	}
}

func TestSummarizePeakMeanAndReset(t *testing.T) {
	t0 := time.Unix(0, 0)
	c := func(sec int, in, out uint64) Snapshot {
		return Snapshot{Time: t0.Add(time.Duration(sec) * time.Second), Interfaces: map[string]Counters{"eth0": {in, out}}, Devices: map[string]Counters{}}
	}
	// 100 B/s, then 300 B/s, then a reset (counted as zero), then 100 B/s.
	s := Summarize([]Snapshot{c(0, 0, 0), c(1, 100, 0), c(2, 200, 200), c(3, 5, 0), c(4, 55, 50)}, time.Second, false)
	e := s.Interfaces[0]
	if e.PeakBytesPerSecond != 300 || e.MeanBytesPerSecond != 500.0/4 || e.InPeakBytesPerSecond != 100 || e.OutPeakBytesPerSecond != 200 {
		t.Fatalf("%+v", e)
	}
	if e.Intervals != nil {
		t.Errorf("intervals kept")
	}
	if s := Summarize([]Snapshot{c(0, 0, 0)}, time.Second, false); s.Interfaces != nil || s.Samples != 1 {
		t.Errorf("one sample: %+v", s)
	}
}

func TestParseErrors(t *testing.T) {
	if _, err := ParseNetDev([]byte("h1|\nh2|\n eth0: 1 2 3\n")); err == nil {
		t.Error("short net/dev line accepted")
	}
	if _, err := ParseNetDev([]byte("h1|\nh2|\n")); err == nil {
		t.Error("net/dev without interfaces accepted")
	}
	if _, err := ParseDiskstats([]byte("8 0 sda 1 2 x 4 5 6 7 8 9 10 11\n")); err == nil {
		t.Error("bad diskstats accepted")
	}
	if m, err := ParseNetDev([]byte("h1|\nh2|\neth0:123 1 0 0 0 0 0 0 456 1 0 0 0 0 0 0\n")); err != nil || m["eth0"].In != 123 || m["eth0"].Out != 456 {
		t.Errorf("name touching counter: %v %v", m, err)
	}
	const row = ": 1 0 0 0 0 0 0 0 2 0 0 0 0 0 0 0\n"
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"interface twice", second(ParseNetDev([]byte("h1|\nh2|\neth0" + row + "eth0" + row))), `interface "eth0" twice`},
		{"name with a space", second(ParseNetDev([]byte("h1|\nh2|\net h0" + row))), `"et h0" is not an interface name`},
		{"overlong line", second(ParseNetDev([]byte("h1|\nh2|\neth0" + row + strings.Repeat("9", 70000) + "\n"))), "line 4: bufio.Scanner: token too long"},
		{"sectors beyond 16 EiB", second(ParseDiskstats([]byte("8 0 sda 1 2 36028797018963968 4 5 6 7 8 9 10 11\n"))), "sda: sector counts 36028797018963968, 7 are beyond 16 EiB"},
		{"device twice", second(ParseDiskstats([]byte("8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n"))), `device "sda" twice`},
		{"not a device number", second(ParseDiskstats([]byte("x 0 sda 1 2 3 4 5 6 7 8 9 10 11\n"))), "is not a device number"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, c.err, c.want)
		}
	}
}

func second(_ map[string]Counters, err error) error { return err }

func TestSamplerOnThisNode(t *testing.T) {
	s := &Sampler{ProcRoot: "/proc", Interval: 20 * time.Millisecond, KeepIntervals: true}
	if err := s.Start(context.Background()); err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	time.Sleep(120 * time.Millisecond)
	sum, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if sum.Samples < 3 {
		t.Errorf("samples %d", sum.Samples)
	}
}

func TestDeviceByNumber(t *testing.T) {
	text, err := os.ReadFile("testdata/diskstats-2.txt")
	if err != nil {
		t.Fatal(err)
	}
	all, err := ParseDiskstats(text)
	if err != nil {
		t.Fatal(err)
	}
	name, c, ok := DeviceByNumber(text, 254, 0)
	if !ok || name != "vda" || c != all["vda"] {
		t.Errorf("254:0 = %q %+v %v, want vda %+v", name, c, ok, all["vda"])
	}
	if _, _, ok := DeviceByNumber(text, 0, 42); ok {
		t.Error("0:42 (an anonymous device, e.g. overlay) found")
	}
	if name, _, ok := DeviceByNumber([]byte("   7       1 loop1 1 2 3 4 5 6 7 8 9 10\n"), 7, 1); ok {
		t.Errorf("a short line gave %q", name)
	}
}
