// Package bench holds what the benchmark agent and the controller share: the typed results
// of every probe and benchmark (Report), the parsers of each tool's output into those results,
// and the benchmark plans (which tool, which arguments). It is pure Go (standard library
// only) and knows nothing of Kubernetes.
package bench

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/beeburst/beeburst/internal/treecopy"
)

// Phase is how a run of the agent ended.
type Phase string

// Phases of a Report.
const (
	PhaseSucceeded Phase = "succeeded"
	PhaseFailed    Phase = "failed"
	PhaseCancelled Phase = "cancelled"
)

// Operation is what a result measured. The names are the contract of `agent parse` and of the
// Report the controller reads.
type Operation string

// Operations.
const (
	OpWrite     Operation = "write"
	OpRead      Operation = "read"
	OpRandWrite Operation = "randwrite"
	OpRandRead  Operation = "randread"
	OpCreate    Operation = "create"
	OpStat      Operation = "stat"
	OpReadFile  Operation = "readfile" // mdtest's file read (open, read, close)
	OpDelete    Operation = "delete"
	OpTransfer  Operation = "transfer" // iperf3: received bits / 8
)

// Tool names.
const (
	ToolFio    = "fio"
	ToolIperf3 = "iperf3"
	ToolIOR    = "ior"
	ToolMdtest = "mdtest"
)

// Result is one aggregate figure: everything that ran the same operation at the same time,
// summed the way the tool sums it (fio: total bytes / slowest runtime; iperf3: received
// bits / 8 over the test; IOR: aggregate of all tasks). Figures a tool does not measure are
// zero and left out of the JSON: a zero is never a measurement (parsers fail instead).
type Result struct {
	Operation Operation `json:"operation"`
	// BytesPerSecond is the aggregate bandwidth. Absent for metadata operations.
	BytesPerSecond float64 `json:"bytesPerSecond,omitempty"`
	// OpsPerSecond is the aggregate rate of operations (I/O calls, file creates, ...).
	OpsPerSecond float64 `json:"opsPerSecond,omitempty"`
	// Processes is the number of processes (fio jobs, MPI tasks, iperf3 streams) summed.
	Processes int `json:"processes,omitempty"`
	// Nodes is the number of client nodes (fio client mode: servers; IOR/mdtest: nodes).
	Nodes int `json:"nodes,omitempty"`
	// RuntimeSeconds is the runtime the aggregate is computed over (the slowest process).
	RuntimeSeconds float64 `json:"runtimeSeconds,omitempty"`
	// End is when the tool returned (the agent's clock): the run moved its bytes in the
	// RuntimeSeconds before it. Runs on several nodes of one file system are added up over
	// the time they spanned together, not as if they had run at once.
	End time.Time `json:"end,omitzero"`
	// Bytes and Ops are the totals moved.
	Bytes int64 `json:"bytes,omitempty"`
	Ops   int64 `json:"ops,omitempty"`
	// BlockSize is the size of each I/O call in bytes, where the tool says.
	BlockSize int64 `json:"blockSize,omitempty"`
	// Access is "file-per-process" or "shared-file" where the tool says.
	Access string `json:"access,omitempty"`
	// Mixed is true when the operation ran mixed with another one (fio rw=rw/randrw).
	Mixed bool `json:"mixed,omitempty"`
	// StonewallBytesPerSecond is IOR's aggregate during the stonewalling phase (its
	// StoneWallbwMeanMIB is per task; this is multiplied by the tasks).
	StonewallBytesPerSecond float64 `json:"stonewallBytesPerSecond,omitempty"`
	// Retransmits is iperf3's TCP retransmits count.
	Retransmits int64 `json:"retransmits,omitempty"`
	// Label tells results of the same operation apart (e.g. "N=4", "probe").
	Label string `json:"label,omitempty"`
	// Clients are the per-client figures behind an aggregate (fio client mode, iperf3
	// pairs). Detail: dropped first when the Report must be compact.
	Clients []ClientResult `json:"clients,omitempty"`
	// MinBytesPerProcess is the fewest bytes one process moved (fio), used to size the
	// read-back of what was written.
	MinBytesPerProcess int64 `json:"minBytesPerProcess,omitempty"`
	// Device is the block device under the run's directory (a node-local run) and
	// DeviceBytes what it read and wrote while the tool ran (/proc/diskstats): more than
	// Bytes means other work used the device beside the run.
	Device      string `json:"device,omitempty"`
	DeviceBytes int64  `json:"deviceBytes,omitempty"`
	// Interface is the network interface with the address a link probe sent from, and
	// InterfaceSentBytes and InterfaceReceivedBytes what it sent and received while the probe
	// ran (/proc/net/dev): sent well beyond Bytes and the acknowledgements of what it
	// received means other work sent through that interface beside it
	// (limits.ForeignLinkTraffic).
	Interface              string `json:"interface,omitempty"`
	InterfaceSentBytes     int64  `json:"interfaceSentBytes,omitempty"`
	InterfaceReceivedBytes int64  `json:"interfaceReceivedBytes,omitempty"`
}

// ClientResult is one client's (node's) share of an aggregate.
type ClientResult struct {
	Host           string  `json:"host"`
	BytesPerSecond float64 `json:"bytesPerSecond,omitempty"`
	OpsPerSecond   float64 `json:"opsPerSecond,omitempty"`
	Processes      int     `json:"processes,omitempty"`
	RuntimeSeconds float64 `json:"runtimeSeconds,omitempty"`
}

// Parsed is what a parser understood from one output of one tool: the JSON contract of
// `agent parse`.
type Parsed struct {
	Tool    string   `json:"tool"`
	Version string   `json:"version,omitempty"`
	Results []Result `json:"results"`
}

// Tools says which benchmark tools the agent found, with their versions ("" = not present).
type Tools struct {
	Fio    string `json:"fio"`
	Iperf3 string `json:"iperf3"`
	IOR    string `json:"ior"`
	Mdtest string `json:"mdtest"`
}

// Throughput is one interface's or device's throughput while a run was monitored. Peak and
// Mean are of the sum of both directions (received+sent, read+written); In is received or
// read, Out sent or written.
type Throughput struct {
	Name                  string  `json:"name"`
	PeakBytesPerSecond    float64 `json:"peakBytesPerSecond"`
	MeanBytesPerSecond    float64 `json:"meanBytesPerSecond"`
	InPeakBytesPerSecond  float64 `json:"inPeakBytesPerSecond"`
	InMeanBytesPerSecond  float64 `json:"inMeanBytesPerSecond"`
	OutPeakBytesPerSecond float64 `json:"outPeakBytesPerSecond"`
	OutMeanBytesPerSecond float64 `json:"outMeanBytesPerSecond"`
	// Intervals is the per-interval series (in+out, bytes/s). Detail: dropped first when
	// the Report must be compact.
	Intervals []float64 `json:"intervals,omitempty"`
}

// MonitorSummary is stage 4: a node's interfaces and devices while a run went on. Entries
// with no traffic at all are left out; the rest is sorted by peak, busiest first.
type MonitorSummary struct {
	IntervalSeconds float64      `json:"intervalSeconds"`
	Samples         int          `json:"samples"`
	Interfaces      []Throughput `json:"interfaces,omitempty"`
	Devices         []Throughput `json:"devices,omitempty"`
	// Omitted counts entries dropped to keep the Report compact.
	Omitted int `json:"omitted,omitempty"`
}

// SweepPoint is one point of an ideal-workload sweep: M nodes x N processes per node.
type SweepPoint struct {
	Nodes            int      `json:"nodes"`
	ProcessesPerNode int      `json:"processesPerNode"`
	Results          []Result `json:"results"`
}

// Report is what every agent subcommand prints on stdout, writes compactly to the
// termination log (--termination-log) and in full to --output.
type Report struct {
	// Command is the agent subcommand, e.g. "probe-device".
	Command string `json:"command"`
	// Tool is the benchmark tool that ran, e.g. "fio".
	Tool    string `json:"tool,omitempty"`
	Phase   Phase  `json:"phase"`
	Message string `json:"message,omitempty"`
	// Node is $NODE_NAME (the downward API), or the host name.
	Node      string    `json:"node,omitempty"`
	StartTime time.Time `json:"startTime"`
	EndTime   time.Time `json:"endTime"`
	Results   []Result  `json:"results,omitempty"`
	// Sweep holds the points of an ideal-workload sweep (`agent run`).
	Sweep   []SweepPoint    `json:"sweep,omitempty"`
	Monitor *MonitorSummary `json:"monitor,omitempty"`
	// Analysis is the limits engine's verdict where the agent ran one (`agent run`), in
	// internal/limits' JSON ({"limits": ..., "sweep": ...}).
	Analysis json.RawMessage `json:"analysis,omitempty"`
	Tools    Tools           `json:"tools"`
	// FreeBytes is the space available below --dir before the run (device probe), below
	// the directory it made (dir create), or at --free-path (check-module, before the BeeGFS
	// services write there): the operator publishes it as the burst buffer's
	// capacity when the spec gives none, and holds spec.storage.capacityPerNode against it.
	// Nil when it could not be read; 0 is a full file system.
	FreeBytes *int64 `json:"freeBytes,omitempty"`
	// Hardware is what the device probe read about its node from sysfs (link speed, device
	// model, file system size).
	Hardware *Hardware `json:"hardware,omitempty"`
	// Stage holds the totals of a stage-in or stage-out copy (`agent stage`).
	Stage *treecopy.Totals `json:"stage,omitempty"`
	// Output is where the full Report was written (--output), if anywhere.
	Output string `json:"output,omitempty"`
	// Truncated is true when detail was dropped to fit the termination message.
	Truncated bool `json:"truncated,omitempty"`
}

// TerminationMessageLimit is the size Kubernetes keeps of a container's termination message.
const TerminationMessageLimit = 4096

// Compact returns the Report as JSON of at most limit bytes. It drops detail in this order
// until the JSON fits: per-interval series, per-client figures, sweep points (the results
// keep the best), monitored entries beyond the busiest few, the message's tail, results
// beyond the first few. It fails only if even the skeleton does not fit.
func (r Report) Compact(limit int) ([]byte, error) {
	c := r.clone()
	b, err := json.Marshal(c)
	if err != nil || len(b) <= limit {
		return b, err
	}
	c.Truncated = true
	steps := []func(*Report) bool{
		func(c *Report) bool { // per-interval series
			changed := false
			if c.Monitor != nil {
				for i := range c.Monitor.Interfaces {
					changed = changed || c.Monitor.Interfaces[i].Intervals != nil
					c.Monitor.Interfaces[i].Intervals = nil
				}
				for i := range c.Monitor.Devices {
					changed = changed || c.Monitor.Devices[i].Intervals != nil
					c.Monitor.Devices[i].Intervals = nil
				}
			}
			return changed
		},
		func(c *Report) bool { // per-client figures
			changed := false
			for i := range c.Results {
				changed = changed || c.Results[i].Clients != nil
				c.Results[i].Clients = nil
			}
			for p := range c.Sweep {
				for i := range c.Sweep[p].Results {
					changed = changed || c.Sweep[p].Results[i].Clients != nil
					c.Sweep[p].Results[i].Clients = nil
				}
			}
			return changed
		},
		func(c *Report) bool { return trimMonitor(c, 4) },
		func(c *Report) bool { // the analysis (the controller runs its own)
			changed := c.Analysis != nil
			c.Analysis = nil
			return changed
		},
		func(c *Report) bool { // sweep points
			changed := c.Sweep != nil
			c.Sweep = nil
			return changed
		},
		func(c *Report) bool { return trimMonitor(c, 1) },
		func(c *Report) bool { // the message's tail
			if len(c.Message) <= 512 {
				return false
			}
			c.Message = c.Message[:509] + "..."
			return true
		},
		func(c *Report) bool { // results beyond the first few
			if len(c.Results) <= 8 {
				return false
			}
			c.Results = c.Results[:8]
			return true
		},
		func(c *Report) bool {
			if len(c.Message) <= 128 {
				return false
			}
			c.Message = c.Message[:125] + "..."
			return true
		},
	}
	for _, step := range steps {
		if !step(&c) {
			continue
		}
		if b, err = json.Marshal(c); err != nil || len(b) <= limit {
			return b, err
		}
	}
	return nil, fmt.Errorf("report does not fit in %d bytes even without detail (%d bytes)", limit, len(b))
}

func trimMonitor(c *Report, keep int) bool {
	if c.Monitor == nil {
		return false
	}
	changed := false
	if len(c.Monitor.Interfaces) > keep {
		c.Monitor.Omitted += len(c.Monitor.Interfaces) - keep
		c.Monitor.Interfaces = c.Monitor.Interfaces[:keep]
		changed = true
	}
	if len(c.Monitor.Devices) > keep {
		c.Monitor.Omitted += len(c.Monitor.Devices) - keep
		c.Monitor.Devices = c.Monitor.Devices[:keep]
		changed = true
	}
	return changed
}

// clone copies the slices Compact changes, so that r stays whole.
func (r Report) clone() Report {
	c := r
	c.Results = cloneResults(r.Results)
	if r.Sweep != nil {
		c.Sweep = make([]SweepPoint, len(r.Sweep))
		for i, p := range r.Sweep {
			p.Results = cloneResults(p.Results)
			c.Sweep[i] = p
		}
	}
	if r.Monitor != nil {
		m := *r.Monitor
		m.Interfaces = append([]Throughput(nil), m.Interfaces...)
		m.Devices = append([]Throughput(nil), m.Devices...)
		c.Monitor = &m
	}
	return c
}

func cloneResults(rs []Result) []Result {
	if rs == nil {
		return nil
	}
	return append([]Result(nil), rs...)
}

// Find returns the first result of op, or nil.
func Find(rs []Result, op Operation) *Result {
	for i := range rs {
		if rs[i].Operation == op {
			return &rs[i]
		}
	}
	return nil
}
