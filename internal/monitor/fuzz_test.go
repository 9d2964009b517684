package monitor

import (
	"fmt"
	"math"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

// The kernel's files are outside input too: a pod may mount any directory as the host's /proc.
// The targets check that the parsers never panic, that what they accept survives a round trip
// through the file's own format, and that summaries of it are finite and non-negative.

func addSeeds(f *testing.F, names ...string) {
	for _, n := range names {
		b, err := os.ReadFile("testdata/" + n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Add([]byte(""))
}

func sortedNames(m map[string]Counters) []string {
	var names []string
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// formatNetDev writes counters as /proc/net/dev does (other counters zero).
func formatNetDev(m map[string]Counters) []byte {
	var b strings.Builder
	b.WriteString("Inter-|   Receive                                                |  Transmit\n")
	b.WriteString(" face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n")
	for _, n := range sortedNames(m) {
		fmt.Fprintf(&b, "%6s: %d 0 0 0 0 0 0 0 %d 0 0 0 0 0 0 0\n", n, m[n].In, m[n].Out)
	}
	return []byte(b.String())
}

// formatDiskstats writes counters as /proc/diskstats does (sectors of 512 bytes).
func formatDiskstats(m map[string]Counters) []byte {
	var b strings.Builder
	for _, n := range sortedNames(m) {
		fmt.Fprintf(&b, "%4d %7d %s 0 0 %d 0 0 0 %d 0 0 0 0\n", 8, 0, n, m[n].In/sectorSize, m[n].Out/sectorSize)
	}
	return []byte(b.String())
}

// checkSummaries summarises m after zero counters, and zero counters after m (a reset):
// every figure finite and non-negative.
func checkSummaries(t *testing.T, m map[string]Counters) {
	zero := map[string]Counters{}
	for n := range m {
		zero[n] = Counters{}
	}
	t0 := time.Unix(1000, 0)
	for _, pair := range [][2]map[string]Counters{{zero, m}, {m, zero}} {
		s := Summarize([]Snapshot{{Time: t0, Interfaces: pair[0], Devices: pair[0]},
			{Time: t0.Add(time.Second), Interfaces: pair[1], Devices: pair[1]}}, time.Second, true)
		for _, tp := range append(s.Interfaces, s.Devices...) {
			for _, x := range append([]float64{tp.PeakBytesPerSecond, tp.MeanBytesPerSecond, tp.InPeakBytesPerSecond,
				tp.InMeanBytesPerSecond, tp.OutPeakBytesPerSecond, tp.OutMeanBytesPerSecond}, tp.Intervals...) {
				if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
					t.Fatalf("%s: figure %v in %+v", tp.Name, x, tp)
				}
			}
		}
	}
}

func FuzzParseNetDev(f *testing.F) {
	addSeeds(f, "netdev-1.txt", "netdev-2.txt")
	f.Fuzz(func(t *testing.T, text []byte) {
		m, err := ParseNetDev(text)
		if err != nil {
			return
		}
		if len(m) == 0 {
			t.Fatal("accepted with no interfaces")
		}
		again, err := ParseNetDev(formatNetDev(m))
		if err != nil || !reflect.DeepEqual(m, again) {
			t.Fatalf("round trip: %v\n%v\n%v", err, m, again)
		}
		checkSummaries(t, m)
	})
}

func FuzzParseDiskstats(f *testing.F) {
	addSeeds(f, "diskstats-1.txt", "diskstats-2.txt")
	f.Fuzz(func(t *testing.T, text []byte) {
		m, err := ParseDiskstats(text)
		if err != nil {
			return
		}
		for n, c := range m {
			if c.In%sectorSize != 0 || c.Out%sectorSize != 0 {
				t.Fatalf("%s: %+v is not whole sectors", n, c)
			}
		}
		again, err := ParseDiskstats(formatDiskstats(m))
		if err != nil || !reflect.DeepEqual(m, again) {
			t.Fatalf("round trip: %v\n%v\n%v", err, m, again)
		}
		checkSummaries(t, m)
	})
}
