// Package agentapi is the contract between the operator and cmd/agent, the program its node
// pods run: the subcommands and flag names (cmd/agent defines its flags with these constants)
// and one request type per subcommand the operator launches, which renders its arguments.
// The replies are bench.Report, read with bench.DecodeReport. A round-trip test in cmd/agent
// parses every request's Args with the agent's own flag set and expects the request back, so
// the two sides cannot drift.
//
// It imports nothing of Kubernetes: the agent links it.
package agentapi

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"
)

// Subcommands of the agent that the operator launches.
const (
	CmdProbeDevice = "probe-device"
	CmdNetServer   = "net-server"
	CmdNetClient   = "net-client"
	CmdIdeal       = "ideal"
	CmdWorkload    = "workload"
	CmdStage       = "stage"
	CmdCheckModule = "check-module"
	// CmdDir has the subcommands CmdDirCreate and CmdDirRemove.
	CmdDir       = "dir"
	CmdDirCreate = "create"
	CmdDirRemove = "remove"
)

// Flag names (without the leading dashes).
const (
	// Global flags, accepted after any subcommand.
	FlagTerminationLog  = "termination-log"
	FlagMonitorInterval = "monitor-interval"
	FlagTimeout         = "timeout"
	// The chain of a node's runs (Chain).
	FlagChainDir       = "chain-dir"
	FlagChainName      = "chain-name"
	FlagChainAfter     = "chain-after"
	FlagChainStartWith = "chain-start-with"
	FlagChainHoldFor   = "chain-hold-for"
	FlagChainShared    = "chain-shared"

	// The data benchmarks (probe-device, ideal, workload).
	FlagDir       = "dir"
	FlagRuntime   = "runtime"
	FlagProcs     = "procs"
	FlagJobs      = "jobs" // probe-device's name for its processes
	FlagBlockSize = "bs"
	FlagKind      = "kind"
	// FlagLinkAddress: probe-device reports the speed of the interface carrying this address.
	FlagLinkAddress = "link-address"

	// The network probe.
	FlagPort           = "port"
	FlagOneOff         = "one-off"
	FlagHost           = "host"
	FlagStreams        = "streams"
	FlagTime           = "time"
	FlagConnectTimeout = "connect-timeout"

	// stage.
	FlagFrom      = "from"
	FlagTo        = "to"
	FlagShard     = "shard"
	FlagOf        = "of"
	FlagMissingOK = "missing-ok"
	FlagBeeGFS    = "beegfs"

	// dir create|remove.
	FlagPath = "path"

	// check-module.
	FlagName        = "name"
	FlagMachineUUID = "machine-uuid"
	FlagFreePath    = "free-path"
)

// Request is a subcommand with its flags, as the container's arguments.
type Request interface {
	Args() []string
}

// Globals are the flags every subcommand has. Zero values leave the agent's defaults.
type Globals struct {
	// Timeout bounds the whole run (the agent stops the tool and fails past it).
	Timeout time.Duration
	// MonitorInterval samples /proc while the benchmark runs (stage 4); 0: off.
	MonitorInterval time.Duration
	// Chain puts the run in a chain of runs on its node; zero: the run starts at once.
	Chain Chain
}

// Chain orders the runs on one node without the operator in between: every run's pod is
// created up front, and a run measures as soon as the runs before it on its node have ended,
// as markers in a node-local directory tell - not after the kubelet reported their end and
// the next pods started, about 1.3 s per hand-off on the testbed.
type Chain struct {
	// Dir is the node-local directory of the markers (<name>.started, <name>.done).
	Dir string
	// Name is this run's marker name.
	Name string
	// After are the runs on this node that must have ended (with any outcome) before this
	// one measures.
	After []string
	// StartWith are the runs on this node whose pods must have started before this one
	// measures (the first run of a chain): the others' start-ups then do not disturb it.
	StartWith []string
	// HoldFor are the runs on this node this one, having succeeded, waits to end before it
	// exits (the runs after it): its container's exit and its pod's teardown then happen
	// beside the run after those, not beside the next. A failed run exits at once.
	HoldFor []string
	// Shared: Dir lies on the burst buffer's own file system, which every node sees, and
	// StartWith names the runs of the same point on the other nodes: the point's runs start
	// at once, as a parallel benchmark's processes do after a barrier. Each run removes its
	// marker when it ends (the job must not find them), and the directory once it is empty.
	Shared bool
}

// Args renders the chain's flags alone (global flags: they follow any subcommand's).
func (c Chain) Args() []string {
	var a args
	a.str(FlagChainDir, c.Dir)
	a.str(FlagChainName, c.Name)
	a.list(FlagChainAfter, c.After)
	a.list(FlagChainStartWith, c.StartWith)
	a.list(FlagChainHoldFor, c.HoldFor)
	a.bool(FlagChainShared, c.Shared)
	return a
}

// ChainDirOf is the node-local directory of the chain markers of the burst buffer whose
// directory is dataDir: a hidden sibling, <storage path>/beeburst/.chain.<namespace>.<name>,
// outside the burst buffer's own files (which the job sees and a stage-out copies), and removed
// with them ('dir remove').
func ChainDirOf(dataDir string) string {
	return path.Join(path.Dir(dataDir), ".chain."+path.Base(dataDir))
}

// args renders the request's flags. A zero string, number or duration, and a false bool,
// is left out: the agent's default applies.
type args []string

func (a *args) str(name, v string) {
	if v != "" {
		*a = append(*a, "--"+name, v)
	}
}

func (a *args) int(name string, v int) {
	if v != 0 {
		*a = append(*a, "--"+name, strconv.Itoa(v))
	}
}

func (a *args) dur(name string, v time.Duration) {
	if v != 0 {
		*a = append(*a, "--"+name, Duration(v))
	}
}

func (a *args) list(name string, v []string) {
	if len(v) > 0 {
		*a = append(*a, "--"+name, strings.Join(v, ","))
	}
}

func (a *args) bool(name string, v bool) {
	if v {
		*a = append(*a, "--"+name)
	}
}

func (a *args) globals(g Globals) []string {
	a.dur(FlagMonitorInterval, g.MonitorInterval)
	a.dur(FlagTimeout, g.Timeout)
	*a = append(*a, g.Chain.Args()...)
	return *a
}

// Duration writes d as the shortest whole unit that holds it ("3m", "10s", "8760h"), as a
// person would type it; the agent reads it back with time.ParseDuration.
func Duration(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	case d%time.Second == 0:
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return d.String()
}

// ProbeDevice is stage 2's device probe: fio on a node-local directory, write then read.
type ProbeDevice struct {
	Dir       string
	Runtime   time.Duration
	Jobs      int
	BlockSize string
	// LinkAddress: also report the speed of the interface that carries this address (the
	// pod then needs the host network).
	LinkAddress string
	Globals
}

// Args renders the request.
func (r ProbeDevice) Args() []string {
	a := args{CmdProbeDevice}
	a.str(FlagDir, r.Dir)
	a.dur(FlagRuntime, r.Runtime)
	a.int(FlagJobs, r.Jobs)
	a.str(FlagBlockSize, r.BlockSize)
	a.str(FlagLinkAddress, r.LinkAddress)
	return a.globals(r.Globals)
}

// NetServer is the server end of stage 2's network probe (iperf3 -s).
type NetServer struct {
	Port int
	// OneOff: the server exits after one test. False leaves the agent's default, which is
	// also one test.
	OneOff bool
	Globals
}

// Args renders the request.
func (r NetServer) Args() []string {
	a := args{CmdNetServer}
	a.int(FlagPort, r.Port)
	a.bool(FlagOneOff, r.OneOff)
	return a.globals(r.Globals)
}

// NetClient is the client end of stage 2's network probe; its report has one transfer.
type NetClient struct {
	Host           string
	Port           int
	Streams        int
	Time           time.Duration
	ConnectTimeout time.Duration
	Globals
}

// Args renders the request.
func (r NetClient) Args() []string {
	a := args{CmdNetClient}
	a.str(FlagHost, r.Host)
	a.int(FlagPort, r.Port)
	a.int(FlagStreams, r.Streams)
	a.dur(FlagTime, r.Time)
	a.dur(FlagConnectTimeout, r.ConnectTimeout)
	return a.globals(r.Globals)
}

// Ideal is one node's part of one stage-3 point: Procs processes write, then read back.
type Ideal struct {
	Dir     string
	Procs   int
	Runtime time.Duration
	// BlockSize is each write and read call's size ("" leaves the agent's 1 MiB).
	BlockSize string
	Globals
}

// Args renders the request.
func (r Ideal) Args() []string {
	a := args{CmdIdeal}
	a.str(FlagDir, r.Dir)
	a.int(FlagProcs, r.Procs)
	a.dur(FlagRuntime, r.Runtime)
	a.str(FlagBlockSize, r.BlockSize)
	return a.globals(r.Globals)
}

// Workload kinds: the software factors measured after stage 3.
const (
	KindSharedFile = "sharedfile"
	KindRandom4k   = "random4k"
	KindMetadata   = "metadata"
)

// Workload is one node's part of one workload benchmark.
type Workload struct {
	Kind    string
	Dir     string
	Procs   int
	Runtime time.Duration
	Globals
}

// Args renders the request.
func (r Workload) Args() []string {
	a := args{CmdWorkload}
	a.str(FlagKind, r.Kind)
	a.str(FlagDir, r.Dir)
	a.int(FlagProcs, r.Procs)
	a.dur(FlagRuntime, r.Runtime)
	return a.globals(r.Globals)
}

// Pair is one copy of a stage: a tree from a directory or object-store URL to another.
type Pair struct{ From, To string }

// Stage copies trees in (stage-in) or out (stage-out) of a burst buffer.
type Stage struct {
	Pairs []Pair
	// MissingOK: a missing source is an empty copy.
	MissingOK bool
	// BeeGFS is a directory that must be a BeeGFS mount: the copy refuses to start when it
	// is not (the node's client mount is gone, and an empty mount point would be copied as
	// if the job had written nothing).
	BeeGFS string
	// Shard of Of copiers sharing the files; Of 0: one copier, all files.
	Shard, Of int
	Globals
}

// Args renders the request.
func (r Stage) Args() []string {
	a := args{CmdStage}
	for _, p := range r.Pairs {
		a = append(a, "--"+FlagFrom, p.From, "--"+FlagTo, p.To)
	}
	a.bool(FlagMissingOK, r.MissingOK)
	a.str(FlagBeeGFS, r.BeeGFS)
	if r.Of > 0 {
		// Shard 0 is a shard like any other: written out whenever the files are shared.
		a = append(a, "--"+FlagShard, strconv.Itoa(r.Shard), "--"+FlagOf, strconv.Itoa(r.Of))
	}
	return a.globals(r.Globals)
}

// DirCreate makes a burst buffer's node-local directory; DirRemove removes it.
type DirCreate struct {
	Path string
	Globals
}

// Args renders the request.
func (r DirCreate) Args() []string {
	a := args{CmdDir, CmdDirCreate}
	a.str(FlagPath, r.Path)
	return a.globals(r.Globals)
}

// DirRemove removes a burst buffer's node-local directory and everything in it, and its
// chain markers (ChainDirOf).
type DirRemove struct {
	Path string
	Globals
}

// Args renders the request.
func (r DirRemove) Args() []string {
	a := args{CmdDir, CmdDirRemove}
	a.str(FlagPath, r.Path)
	return a.globals(r.Globals)
}

// CheckModule checks that a kernel module is loaded on the node (and its machine UUID).
type CheckModule struct {
	Name        string
	MachineUUID bool
	// FreePath is a directory whose file system's free space the report gives
	// (Report.FreeBytes); "" for none.
	FreePath string
	Globals
}

// Args renders the request.
func (r CheckModule) Args() []string {
	a := args{CmdCheckModule}
	a.str(FlagName, r.Name)
	a.bool(FlagMachineUUID, r.MachineUUID)
	a.str(FlagFreePath, r.FreePath)
	return a.globals(r.Globals)
}
