package kubelet

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/beeburst/beeburst/internal/agentapi"
	"github.com/beeburst/beeburst/internal/bench"
)

// task is what a pod's agent was asked to do, read back from its container's arguments.
type task struct {
	// command is the subcommand ("probe-device", "dir create", ...).
	command string
	flags   map[string]string
	chain   agentapi.Chain
}

// boolFlags take no value.
var boolFlags = map[string]bool{agentapi.FlagOneOff: true, agentapi.FlagMissingOK: true, "no-read": true, "direct": true}

// parseTask reads the agent's arguments of pod; false for a pod that does not run the agent.
func parseTask(pod *corev1.Pod) (task, bool) {
	if len(pod.Spec.Containers) == 0 {
		return task{}, false
	}
	args := pod.Spec.Containers[0].Args
	t := task{flags: map[string]string{}}
	var words []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "--") {
			words = append(words, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !hasVal && !boolFlags[name] && i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
			val, i = args[i+1], i+1
		}
		t.flags[name] = val
	}
	if len(words) == 0 {
		return task{}, false
	}
	t.command = strings.Join(words, " ")
	t.chain = agentapi.Chain{
		Dir: t.flags[agentapi.FlagChainDir], Name: t.flags[agentapi.FlagChainName],
		After: list(t.flags[agentapi.FlagChainAfter]), StartWith: list(t.flags[agentapi.FlagChainStartWith]),
		HoldFor: list(t.flags[agentapi.FlagChainHoldFor]),
	}
	return t, true
}

func list(v string) []string {
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

func (t task) chained() bool { return t.chain.Dir != "" && t.chain.Name != "" }

func (t task) duration(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(t.flags[name]); err == nil && d > 0 {
		return d
	}
	return def
}

func (t task) int(name string, def int) int {
	if n, err := strconv.Atoi(t.flags[name]); err == nil && n > 0 {
		return n
	}
	return def
}

// blockSize is --bs in bytes (1 MiB when not given, the agent's default).
func (t task) blockSize() int64 {
	bs, err := bench.ParseSize(t.flags[agentapi.FlagBlockSize])
	if err != nil || bs <= 0 {
		return 1 << 20
	}
	return bs
}

// sequential is one phase of a fio run as the agent reports it.
func sequential(op bench.Operation, bps float64, procs int, runtime time.Duration, bs int64) bench.Result {
	secs := runtime.Seconds()
	return bench.Result{
		Operation: op, BytesPerSecond: bps, OpsPerSecond: bps / float64(bs), Processes: procs, Nodes: 1,
		RuntimeSeconds: secs, Bytes: int64(bps * secs), Ops: int64(bps * secs / float64(bs)), BlockSize: bs,
		Access: "file-per-process", MinBytesPerProcess: int64(bps * secs / float64(procs) * 0.98),
	}
}

// deviceReport is probe-device's report on node n: write, then read, with enough jobs.
func deviceReport(n Node, t task, key string) bench.Report {
	jobs := t.int(agentapi.FlagJobs, 4)
	rt := t.duration(agentapi.FlagRuntime, 10*time.Second)
	eff := processEfficiency(jobs)
	rep := bench.Report{
		Command: agentapi.CmdProbeDevice, Tool: bench.ToolFio, FreeBytes: new(n.FreeBytes),
		Results: []bench.Result{
			sequential(bench.OpWrite, n.WriteBytesPerSecond*eff*jitter(key+"/w", 0.01), jobs, rt, t.blockSize()),
			sequential(bench.OpRead, n.ReadBytesPerSecond*eff*jitter(key+"/r", 0.01), jobs, rt, t.blockSize()),
		},
		Hardware: &bench.Hardware{Device: "nvme0n1", DeviceNumber: "259:0", Model: "SIM NVMe 3.84TB", FileSystemBytes: n.FileSystemBytes},
	}
	if addr := t.flags[agentapi.FlagLinkAddress]; addr != "" {
		rep.Hardware.LinkAddress, rep.Hardware.Interface = addr, "eth0"
		rep.Hardware.LinkMbps = int64(n.LinkBytesPerSecond * 8 / 1e6)
	}
	return rep
}

// idealReport is node n's part of a sweep point (ideal): procs processes writing, then
// reading back, with the device sampled as stage 4 does.
func idealReport(n Node, t task, key string) bench.Report {
	procs := t.int(agentapi.FlagProcs, 1)
	rt := t.duration(agentapi.FlagRuntime, 5*time.Second)
	eff := processEfficiency(procs)
	w := n.WriteBytesPerSecond * eff * jitter(key+"/w", 0.01)
	r := n.ReadBytesPerSecond * eff * jitter(key+"/r", 0.01)
	label := fmt.Sprintf("ideal M=1 N=%d", procs)
	write, read := sequential(bench.OpWrite, w, procs, rt, t.blockSize()), sequential(bench.OpRead, r, procs, rt, t.blockSize())
	write.Label, read.Label = label, label
	rep := bench.Report{Command: agentapi.CmdIdeal, Tool: bench.ToolFio, Results: []bench.Result{write, read}}
	if t.flags[agentapi.FlagMonitorInterval] != "" {
		interval := t.duration(agentapi.FlagMonitorInterval, 500*time.Millisecond)
		rep.Monitor = &bench.MonitorSummary{
			IntervalSeconds: interval.Seconds(), Samples: int(2 * rt / interval),
			Devices: []bench.Throughput{{
				Name: "nvme0n1", PeakBytesPerSecond: max(w, r) * 1.02, MeanBytesPerSecond: (w + r) / 2,
				InPeakBytesPerSecond: r * 1.02, InMeanBytesPerSecond: r / 2, OutPeakBytesPerSecond: w * 1.02, OutMeanBytesPerSecond: w / 2,
			}},
		}
	}
	return rep
}
