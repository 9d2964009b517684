package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// manager is the operator as cmd/manager runs it, in its own process: its memory and CPU are
// read from /proc, apart from the harness's.
type manager struct {
	cmd         *exec.Cmd
	metricsAddr string
	pprofAddr   string
	logFile     *os.File
	done        chan struct{}

	mu       sync.Mutex
	peakRSS  int64 // VmHWM, bytes
	rss      int64 // the last VmRSS
	cpu      time.Duration
	samples  []rssSample
	exitErr  error
	sampling chan struct{}
}

type rssSample struct {
	at  time.Time
	rss int64
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// startManager runs bin/manager against the cluster with the manager's identity, the
// metrics endpoint on a free local port and the log in dir.
func startManager(binary, kubeconfig, dir string, pprof bool) (*manager, error) {
	metrics, err := freePort()
	if err != nil {
		return nil, err
	}
	probes, err := freePort()
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(dir, "manager.log"))
	if err != nil {
		return nil, err
	}
	m := &manager{metricsAddr: metrics, logFile: logFile, done: make(chan struct{}), sampling: make(chan struct{})}
	args := []string{
		"--kubeconfig", kubeconfig,
		"--metrics-bind-address", metrics,
		"--health-probe-bind-address", probes,
		"--cache-namespace", operatorNamespace,
		"--agent-image", "beeburst/agent:scale",
		"--slow-visit-log", slowVisitThreshold.String(),
	}
	if pprof {
		if m.pprofAddr, err = freePort(); err != nil {
			return nil, err
		}
		args = append(args, "--pprof-bind-address", m.pprofAddr)
	}
	m.cmd = exec.Command(binary, args...)
	m.cmd.Stdout, m.cmd.Stderr = logFile, logFile
	if err := m.cmd.Start(); err != nil {
		logFile.Close()
		return nil, err
	}
	go func() {
		err := m.cmd.Wait()
		m.mu.Lock()
		m.exitErr = err
		m.mu.Unlock()
		close(m.done)
	}()
	go m.sample()
	// Ready when the metrics endpoint answers (the manager serves it once started).
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := m.scrape(); err == nil {
			return m, nil
		}
		select {
		case <-m.done:
			return nil, fmt.Errorf("the manager exited at start: %v (log: %s)", m.exitErr, logFile.Name())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = m.stop()
			return nil, fmt.Errorf("the manager's metrics endpoint did not answer within 60 s (log: %s)", logFile.Name())
		}
	}
}

// sample reads the process's resident memory, its peak and its CPU time every 250 ms.
func (m *manager) sample() {
	defer close(m.sampling)
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		m.readProc()
		select {
		case <-m.done:
			return
		case <-t.C:
		}
	}
}

func (m *manager) readProc() {
	pid := m.cmd.Process.Pid
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return
	}
	var rss, hwm int64
	sc := bufio.NewScanner(strings.NewReader(string(status)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = kb << 10
		case "VmHWM:":
			hwm = kb << 10
		}
	}
	cpu, ok := procCPU(pid)
	if !ok {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if hwm > m.peakRSS {
		m.peakRSS = hwm
	}
	m.rss = rss
	m.cpu = cpu
	m.samples = append(m.samples, rssSample{time.Now(), rss})
}

func (m *manager) usage() (peak, last int64, cpu time.Duration) {
	m.readProc()
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.peakRSS, m.rss, m.cpu
}

// scrape reads the manager's metrics in the protobuf format, which carries the native
// histograms (controller-runtime's reconcile and queue histograms have ~10% buckets there,
// against a handful of fixed buckets in the text format).
func (m *manager) scrape() (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+m.metricsAddr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeProtoDelim)))
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("metrics: %s", resp.Status)
	}
	dec := expfmt.NewDecoder(resp.Body, expfmt.ResponseFormat(resp.Header))
	out := map[string]*dto.MetricFamily{}
	for {
		var mf dto.MetricFamily
		if err := dec.Decode(&mf); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		out[mf.GetName()] = &mf
	}
}

// profile saves the manager's profile of kind ("profile" for CPU over seconds, "heap") to file.
func (m *manager) profile(kind string, seconds int, file string) error {
	url := fmt.Sprintf("http://%s/debug/pprof/%s", m.pprofAddr, kind)
	if seconds > 0 {
		url += fmt.Sprintf("?seconds=%d", seconds)
	}
	resp, err := (&http.Client{Timeout: time.Duration(seconds+30) * time.Second}).Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("pprof %s: %s", kind, resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(f, resp.Body)
	return err
}

// stop ends the manager as a deployment's rollout does (SIGTERM) and waits for it.
func (m *manager) stop() error {
	defer m.logFile.Close()
	select {
	case <-m.done:
	default:
		_ = m.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-m.done:
		case <-time.After(40 * time.Second):
			_ = m.cmd.Process.Kill()
			<-m.done
		}
	}
	<-m.sampling
	return nil
}

// metric finds the series of family name whose labels include want.
func metric(fams map[string]*dto.MetricFamily, name string, want map[string]string) []*dto.Metric {
	mf := fams[name]
	if mf == nil {
		return nil
	}
	var out []*dto.Metric
	for _, mt := range mf.GetMetric() {
		ok := true
		for k, v := range want {
			if labelValue(mt, k) != v {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, mt)
		}
	}
	return out
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// sumCounter sums the counters (or gauges) of family name whose labels include want.
func sumCounter(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	var s float64
	for _, m := range metric(fams, name, want) {
		switch {
		case m.Counter != nil:
			s += m.Counter.GetValue()
		case m.Gauge != nil:
			s += m.Gauge.GetValue()
		}
	}
	return s
}

// quantile is the q-quantile of a histogram: from its native buckets where it has them,
// else from its classic buckets; linear within a bucket. NaN without observations.
func quantile(h *dto.Histogram, q float64) float64 {
	if h == nil || h.GetSampleCount() == 0 {
		return math.NaN()
	}
	if h.Schema != nil && (len(h.GetPositiveSpan()) > 0 || h.GetZeroCount() > 0) {
		return nativeQuantile(h, q)
	}
	rank := q * float64(h.GetSampleCount())
	prevBound, prevCount := 0.0, 0.0
	for _, b := range h.GetBucket() {
		c := float64(b.GetCumulativeCount())
		if c >= rank {
			if math.IsInf(b.GetUpperBound(), 1) || c == prevCount {
				return b.GetUpperBound()
			}
			return prevBound + (b.GetUpperBound()-prevBound)*(rank-prevCount)/(c-prevCount)
		}
		prevBound, prevCount = b.GetUpperBound(), c
	}
	return prevBound
}

// shareWithin is the share of a histogram's observations at most x, read as quantile reads
// it (the q whose quantile is x). NaN without observations.
func shareWithin(h *dto.Histogram, x float64) float64 {
	if h == nil || h.GetSampleCount() == 0 {
		return math.NaN()
	}
	lo, hi := 0.0, 1.0
	for range 40 {
		if mid := (lo + hi) / 2; quantile(h, mid) <= x {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// nativeQuantile: bucket i of schema s spans (base^(i-1), base^i], base = 2^(2^-s).
func nativeQuantile(h *dto.Histogram, q float64) float64 {
	type bucket struct {
		lo, hi float64
		n      float64
	}
	base := math.Pow(2, math.Pow(2, -float64(h.GetSchema())))
	buckets := []bucket{{0, h.GetZeroThreshold(), float64(h.GetZeroCount())}}
	idx, count := int32(0), int64(0)
	deltas := h.GetPositiveDelta()
	d := 0
	for _, sp := range h.GetPositiveSpan() {
		idx += sp.GetOffset()
		for j := uint32(0); j < sp.GetLength(); j++ {
			count += deltas[d]
			d++
			buckets = append(buckets, bucket{math.Pow(base, float64(idx-1)), math.Pow(base, float64(idx)), float64(count)})
			idx++
		}
	}
	sort.Slice(buckets, func(i, j int) bool { return buckets[i].hi < buckets[j].hi })
	rank := q * float64(h.GetSampleCount())
	seen := 0.0
	for _, b := range buckets {
		if b.n > 0 && seen+b.n >= rank {
			return b.lo + (b.hi-b.lo)*(rank-seen)/b.n
		}
		seen += b.n
	}
	return buckets[len(buckets)-1].hi
}

// histogram is the one histogram of family name whose labels include want (nil if none).
func histogram(fams map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Histogram {
	for _, m := range metric(fams, name, want) {
		if m.Histogram != nil {
			return m.Histogram
		}
	}
	return nil
}
