// Package monitor is stage 4 of the limit method on one node: it samples the node's network
// interface counters (/proc/net/dev) and block device counters (/proc/diskstats) while a
// benchmark runs and summarises them as per-interface and per-device peak and mean
// throughput. Parsing and summarising are pure functions of the files' text.
package monitor

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/beeburst/beeburst/internal/bench"
)

// Counters are the cumulative byte counters of one interface (In = received, Out = sent) or
// device (In = read, Out = written).
type Counters struct {
	In, Out uint64
}

// Snapshot is one sample of a node's counters.
type Snapshot struct {
	Time       time.Time
	Interfaces map[string]Counters
	Devices    map[string]Counters
}

// ParseNetDev parses /proc/net/dev: two header lines, then "name: rx_bytes rx_packets ...
// (8 receive fields) tx_bytes ...". The name and the first number may touch ("eth0:123").
// Interface names cannot hold ':', '/' or white space (the kernel's dev_valid_name), so the
// first colon ends the name.
func ParseNetDev(text []byte) (map[string]Counters, error) {
	m := map[string]Counters{}
	sc := bufio.NewScanner(bytes.NewReader(text))
	line := 0
	for sc.Scan() {
		line++
		l := sc.Text()
		colon := strings.IndexByte(l, ':')
		if colon < 0 {
			if line <= 2 || strings.TrimSpace(l) == "" {
				continue
			}
			return nil, fmt.Errorf("/proc/net/dev line %d: no interface name: %q", line, l)
		}
		if line <= 2 && strings.Contains(l, "|") {
			continue // header
		}
		name := strings.TrimSpace(l[:colon])
		if name == "" || strings.ContainsAny(name, "/ \t") {
			return nil, fmt.Errorf("/proc/net/dev line %d: %q is not an interface name", line, name)
		}
		f := strings.Fields(l[colon+1:])
		if len(f) < 9 {
			return nil, fmt.Errorf("/proc/net/dev line %d: want 16 counters (at least 9), got %d: %q", line, len(f), l)
		}
		rx, err1 := strconv.ParseUint(f[0], 10, 64)
		tx, err2 := strconv.ParseUint(f[8], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("/proc/net/dev line %d: bad counters: %q", line, l)
		}
		if _, dup := m[name]; dup {
			return nil, fmt.Errorf("/proc/net/dev line %d: interface %q twice", line, name)
		}
		m[name] = Counters{In: rx, Out: tx}
	}
	if err := sc.Err(); err != nil {
		// A line longer than the scanner's buffer: whatever it is, it is not /proc/net/dev.
		return nil, fmt.Errorf("/proc/net/dev line %d: %w", line+1, err)
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("/proc/net/dev: no interfaces")
	}
	return m, nil
}

// sectorSize is the unit of /proc/diskstats' sector counts, whatever the device's own.
const sectorSize = 512

// ParseDiskstats parses /proc/diskstats: "major minor name reads merged sectors_read
// ms_reading writes merged sectors_written ...". Devices that only ever did nothing (most
// loop and ram devices) are kept: the summary drops idle ones.
func ParseDiskstats(text []byte) (map[string]Counters, error) {
	m := map[string]Counters{}
	sc := bufio.NewScanner(bytes.NewReader(text))
	line := 0
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) < 14 {
			return nil, fmt.Errorf("/proc/diskstats line %d: want at least 14 fields, got %d", line, len(f))
		}
		_, err1 := strconv.ParseUint(f[0], 10, 32)
		_, err2 := strconv.ParseUint(f[1], 10, 32)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("/proc/diskstats line %d: %q %q is not a device number", line, f[0], f[1])
		}
		rd, err1 := strconv.ParseUint(f[5], 10, 64)
		wr, err2 := strconv.ParseUint(f[9], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("/proc/diskstats line %d: bad counters", line)
		}
		// In bytes the counters must still fit 64 bits: 2^55 sectors is 16 EiB, which no
		// device has moved; a larger count is garbage and would wrap around silently.
		if rd > math.MaxUint64/sectorSize || wr > math.MaxUint64/sectorSize {
			return nil, fmt.Errorf("/proc/diskstats line %d: %s: sector counts %d, %d are beyond 16 EiB", line, f[2], rd, wr)
		}
		if _, dup := m[f[2]]; dup {
			return nil, fmt.Errorf("/proc/diskstats line %d: device %q twice", line, f[2])
		}
		m[f[2]] = Counters{In: rd * sectorSize, Out: wr * sectorSize}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("/proc/diskstats line %d: %w", line+1, err)
	}
	return m, nil
}

// DeviceByNumber finds the device major:minor in /proc/diskstats' text: its name and
// counters; false when it is not there (a file system without a block device of its own).
func DeviceByNumber(text []byte, major, minor uint32) (string, Counters, bool) {
	want := [2]string{strconv.FormatUint(uint64(major), 10), strconv.FormatUint(uint64(minor), 10)}
	sc := bufio.NewScanner(bytes.NewReader(text))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 14 || f[0] != want[0] || f[1] != want[1] {
			continue
		}
		rd, err1 := strconv.ParseUint(f[5], 10, 64)
		wr, err2 := strconv.ParseUint(f[9], 10, 64)
		if err1 != nil || err2 != nil || rd > math.MaxUint64/sectorSize || wr > math.MaxUint64/sectorSize {
			return "", Counters{}, false
		}
		return f[2], Counters{In: rd * sectorSize, Out: wr * sectorSize}, true
	}
	return "", Counters{}, false
}

// Read takes one Snapshot from procRoot (usually /proc; a pod may mount the host's at
// another path).
func Read(procRoot string) (Snapshot, error) {
	s := Snapshot{Time: time.Now()}
	nd, err := os.ReadFile(filepath.Join(procRoot, "net", "dev"))
	if err != nil {
		return s, err
	}
	if s.Interfaces, err = ParseNetDev(nd); err != nil {
		return s, err
	}
	ds, err := os.ReadFile(filepath.Join(procRoot, "diskstats"))
	if err != nil {
		return s, err
	}
	s.Devices, err = ParseDiskstats(ds)
	return s, err
}

// Summarize turns consecutive snapshots into peak and mean throughput per interface and per
// device. Each interval's rate is its counter delta over its own measured duration; a counter
// that went backwards (reset, wrap) makes that interval count as zero for that entry. Entries
// without traffic are left out; the rest are sorted busiest first. keepIntervals keeps the
// per-interval series.
func Summarize(snaps []Snapshot, interval time.Duration, keepIntervals bool) *bench.MonitorSummary {
	s := &bench.MonitorSummary{IntervalSeconds: interval.Seconds(), Samples: len(snaps)}
	if len(snaps) < 2 {
		return s
	}
	s.Interfaces = summarize(snaps, func(x Snapshot) map[string]Counters { return x.Interfaces }, keepIntervals)
	s.Devices = summarize(snaps, func(x Snapshot) map[string]Counters { return x.Devices }, keepIntervals)
	return s
}

func summarize(snaps []Snapshot, get func(Snapshot) map[string]Counters, keep bool) []bench.Throughput {
	total := snaps[len(snaps)-1].Time.Sub(snaps[0].Time).Seconds()
	if total <= 0 {
		return nil
	}
	names := map[string]bool{}
	for _, sn := range snaps {
		for n := range get(sn) {
			names[n] = true
		}
	}
	var out []bench.Throughput
	for n := range names {
		t := bench.Throughput{Name: n}
		var sumIn, sumOut float64
		for i := 1; i < len(snaps); i++ {
			a, okA := get(snaps[i-1])[n]
			b, okB := get(snaps[i])[n]
			dt := snaps[i].Time.Sub(snaps[i-1].Time).Seconds()
			var in, out float64
			if okA && okB && dt > 0 && b.In >= a.In && b.Out >= a.Out {
				in, out = float64(b.In-a.In), float64(b.Out-a.Out)
			}
			sumIn, sumOut = sumIn+in, sumOut+out
			if dt <= 0 {
				continue
			}
			rin, rout := in/dt, out/dt
			t.InPeakBytesPerSecond = max(t.InPeakBytesPerSecond, rin)
			t.OutPeakBytesPerSecond = max(t.OutPeakBytesPerSecond, rout)
			t.PeakBytesPerSecond = max(t.PeakBytesPerSecond, rin+rout)
			if keep {
				t.Intervals = append(t.Intervals, rin+rout)
			}
		}
		if sumIn+sumOut == 0 {
			continue
		}
		t.InMeanBytesPerSecond = sumIn / total
		t.OutMeanBytesPerSecond = sumOut / total
		t.MeanBytesPerSecond = (sumIn + sumOut) / total
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].PeakBytesPerSecond != out[j].PeakBytesPerSecond {
			return out[i].PeakBytesPerSecond > out[j].PeakBytesPerSecond
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Sampler samples a node's counters every interval until it is stopped.
type Sampler struct {
	ProcRoot string
	Interval time.Duration
	// KeepIntervals keeps the per-interval series in the summary.
	KeepIntervals bool

	cancel context.CancelFunc
	done   chan struct{}
	snaps  []Snapshot
	err    error
}

// Start takes the first sample and starts sampling in the background.
func (s *Sampler) Start(ctx context.Context) error {
	if s.Interval <= 0 {
		return fmt.Errorf("monitor interval must be positive")
	}
	if s.ProcRoot == "" {
		s.ProcRoot = "/proc"
	}
	first, err := Read(s.ProcRoot)
	if err != nil {
		return err
	}
	s.snaps = []Snapshot{first}
	ctx, s.cancel = context.WithCancel(ctx)
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		tick := time.NewTicker(s.Interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				sn, err := Read(s.ProcRoot)
				if err != nil {
					s.err = err
					return
				}
				s.snaps = append(s.snaps, sn)
			}
		}
	}()
	return nil
}

// Stop takes a last sample, stops sampling and returns the summary.
func (s *Sampler) Stop() (*bench.MonitorSummary, error) {
	if s.cancel == nil {
		return nil, fmt.Errorf("monitor was not started")
	}
	s.cancel()
	<-s.done
	if s.err != nil {
		return nil, s.err
	}
	// The last partial interval counts too, unless it is too short to mean anything.
	if last, err := Read(s.ProcRoot); err == nil && last.Time.Sub(s.snaps[len(s.snaps)-1].Time) >= s.Interval/10 {
		s.snaps = append(s.snaps, last)
	}
	return Summarize(s.snaps, s.Interval, s.KeepIntervals), nil
}
