package bench

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// fioAllClients is the job name of fio's client-mode aggregate entry.
const fioAllClients = "All clients"

type fioOutput struct {
	Version       string            `json:"fio version"`
	GlobalOptions map[string]string `json:"global options"`
	Jobs          []fioJob          `json:"jobs"`
	ClientStats   []fioJob          `json:"client_stats"`
}

type fioJob struct {
	JobName    string            `json:"jobname"`
	GroupID    int               `json:"groupid"`
	Error      int               `json:"error"`
	JobOptions map[string]string `json:"job options"`
	Read       *fioDir           `json:"read"`
	Write      *fioDir           `json:"write"`
	Trim       *fioDir           `json:"trim"`
	Hostname   string            `json:"hostname"`
	Port       int               `json:"port"`
}

type fioDir struct {
	IOBytes  float64 `json:"io_bytes"`
	BWBytes  float64 `json:"bw_bytes"`
	IOPS     float64 `json:"iops"`
	Runtime  float64 `json:"runtime"` // milliseconds
	TotalIOs float64 `json:"total_ios"`
}

func (d *fioDir) active() bool { return d != nil && (d.IOBytes > 0 || d.TotalIOs > 0) }

// fioDirOp is an operation measured in one direction (fio's "read" or "write" section).
type fioDirOp struct {
	dir   string // "read" or "write"
	op    Operation
	mixed bool
}

// fioOps derives what a job ran from its options (job options over global options): the
// ioengine for metadata engines, otherwise rw. Never from the job's name.
func fioOps(global, job map[string]string) ([]fioDirOp, error) {
	opt := func(keys ...string) string {
		for _, k := range keys {
			if v, ok := job[k]; ok {
				return v
			}
		}
		for _, k := range keys {
			if v, ok := global[k]; ok {
				return v
			}
		}
		return ""
	}
	engine := opt("ioengine")
	// "libaio:cmd"-style suffixes are engine options; external engines are paths.
	if i := strings.IndexByte(engine, ':'); i >= 0 {
		engine = engine[:i]
	}
	switch engine {
	case "filecreate":
		return []fioDirOp{{dir: "any", op: OpCreate}}, nil
	case "filestat":
		return []fioDirOp{{dir: "any", op: OpStat}}, nil
	case "filedelete":
		return []fioDirOp{{dir: "any", op: OpDelete}}, nil
	case "dircreate", "dirstat", "dirdelete", "ftruncate", "falloc", "null", "cpuio", "exec", "net", "netsplice":
		return nil, fmt.Errorf("ioengine=%s is not supported", engine)
	}
	rw := opt("rw", "readwrite")
	if i := strings.IndexByte(rw, ':'); i >= 0 {
		rw = rw[:i]
	}
	switch rw {
	case "", "read":
		return []fioDirOp{{dir: "read", op: OpRead}}, nil
	case "write":
		return []fioDirOp{{dir: "write", op: OpWrite}}, nil
	case "randread":
		return []fioDirOp{{dir: "read", op: OpRandRead}}, nil
	case "randwrite":
		return []fioDirOp{{dir: "write", op: OpRandWrite}}, nil
	case "rw", "readwrite":
		return []fioDirOp{{dir: "read", op: OpRead, mixed: true}, {dir: "write", op: OpWrite, mixed: true}}, nil
	case "randrw":
		return []fioDirOp{{dir: "read", op: OpRandRead, mixed: true}, {dir: "write", op: OpRandWrite, mixed: true}}, nil
	}
	return nil, fmt.Errorf("rw=%s is not supported", rw)
}

// fioProcesses is how many processes one JSON entry stands for. Without group_reporting
// fio reports each clone of a job (numjobs) on its own: one process per entry. With it, one
// entry stands for the group; fio lists group_reporting among the options only when it was
// given a value (a bare --group_reporting is not listed), so an entry that is the only one of
// its name while numjobs asks for more is a grouped entry too. sameName counts the entries
// of this job's name, group and host.
func fioProcesses(global, job map[string]string, sameName int) int {
	opt := func(k string) string {
		if v, ok := job[k]; ok {
			return v
		}
		return global[k]
	}
	n, err := strconv.Atoi(opt("numjobs"))
	if err != nil || n < 1 {
		return 1
	}
	gr := opt("group_reporting")
	if (gr != "" && gr != "0") || sameName < n {
		return n
	}
	return 1
}

func fioBlockSize(global, job map[string]string) int64 {
	bs := job["bs"]
	if bs == "" {
		bs = job["blocksize"]
	}
	if bs == "" {
		bs = global["bs"]
	}
	if bs == "" {
		bs = global["blocksize"]
	}
	n, err := ParseSize(bs)
	if err != nil {
		return 0
	}
	return n
}

type fioAgg struct {
	key        string
	group      int
	op         Operation
	dir        string
	mixed      bool
	bytes      float64
	ios        float64
	runtimeMS  float64
	processes  int
	minBytes   float64
	blockSize  int64
	perClient  map[string]*fioAgg
	clientKeys []string
}

func (a *fioAgg) add(d *fioDir, procs int) {
	a.bytes += d.IOBytes
	a.ios += d.TotalIOs
	if d.Runtime > a.runtimeMS {
		a.runtimeMS = d.Runtime
	}
	a.processes += procs
	per := d.IOBytes / float64(procs)
	if a.minBytes == 0 || per < a.minBytes {
		a.minBytes = per
	}
}

// ParseFio parses fio's JSON output, plain (`--output-format=json`) or client mode
// (`--client=...`, text lines precede the JSON). Each result is the aggregate of one group and
// operation: total bytes / slowest runtime, as fio's group statistics and its "All clients"
// entry compute it. In client mode with more than one server the "All clients" entry is the
// aggregate; the per-server figures are kept as Clients.
func ParseFio(out []byte) (*Parsed, error) {
	var o fioOutput
	if err := decodeJSONObject(ToolFio, out, &o); err != nil {
		return nil, err
	}
	clientMode := o.ClientStats != nil
	entries := o.Jobs
	if clientMode {
		entries = o.ClientStats
	}
	if len(entries) == 0 {
		return nil, perr(ToolFio, "no jobs in output")
	}
	var all *fioJob
	nameKey := func(j *fioJob) string { return fmt.Sprintf("%s:%d/%d/%s", j.Hostname, j.Port, j.GroupID, j.JobName) }
	sameName := map[string]int{}
	for i := range entries {
		sameName[nameKey(&entries[i])]++
	}
	aggs := map[string]*fioAgg{}
	var keys []string
	hosts := map[string]bool{}
	for i := range entries {
		j := &entries[i]
		if clientMode && j.JobName == fioAllClients {
			if all != nil {
				return nil, perr(ToolFio, "two %q entries", fioAllClients)
			}
			all = j
			continue
		}
		if j.Error != 0 {
			return nil, perr(ToolFio, "job %q failed with error %d", j.JobName, j.Error)
		}
		ops, err := fioOps(o.GlobalOptions, j.JobOptions)
		if err != nil {
			return nil, perr(ToolFio, "job %q: %v", j.JobName, err)
		}
		procs := fioProcesses(o.GlobalOptions, j.JobOptions, sameName[nameKey(j)])
		if procs > maxProcesses {
			// Also keeps the sums of processes below from overflowing.
			return nil, perr(ToolFio, "job %q: numjobs %d is more than %d processes", j.JobName, procs, maxProcesses)
		}
		host := ""
		if clientMode {
			host = j.Hostname
			if j.Port != 0 {
				host = fmt.Sprintf("%s:%d", j.Hostname, j.Port)
			}
			hosts[host] = true
		}
		for _, do := range ops {
			dirs := map[string]*fioDir{"read": j.Read, "write": j.Write}
			names := []string{do.dir}
			if do.dir == "any" { // metadata engines account under read (fio 3.33), maybe write
				names = []string{"read", "write"}
			}
			for _, dn := range names {
				d := dirs[dn]
				if !d.active() {
					continue
				}
				if d.Runtime <= 0 {
					return nil, perr(ToolFio, "job %q: %s moved data in zero runtime", j.JobName, dn)
				}
				if d.IOBytes < 0 || d.TotalIOs < 0 {
					return nil, perr(ToolFio, "job %q: %s has negative totals (io_bytes %g, total_ios %g)", j.JobName, dn, d.IOBytes, d.TotalIOs)
				}
				key := fmt.Sprintf("%d/%s/%s", j.GroupID, dn, do.op)
				a := aggs[key]
				if a == nil {
					a = &fioAgg{key: key, group: j.GroupID, op: do.op, dir: dn, mixed: do.mixed,
						blockSize: fioBlockSize(o.GlobalOptions, j.JobOptions), perClient: map[string]*fioAgg{}}
					aggs[key] = a
					keys = append(keys, key)
				}
				a.add(d, procs)
				if clientMode {
					c := a.perClient[host]
					if c == nil {
						c = &fioAgg{}
						a.perClient[host] = c
						a.clientKeys = append(a.clientKeys, host)
					}
					c.add(d, procs)
				}
			}
		}
		if j.Trim.active() {
			return nil, perr(ToolFio, "job %q: trim results are not supported", j.JobName)
		}
	}
	if len(aggs) == 0 {
		return nil, perr(ToolFio, "no I/O was measured (all jobs report zero bytes and zero operations)")
	}
	sort.SliceStable(keys, func(a, b int) bool { return aggs[keys[a]].group < aggs[keys[b]].group })

	p := &Parsed{Tool: ToolFio, Version: o.Version}
	if all != nil {
		// The "All clients" entry sums every job of every client per direction: it is an
		// aggregate of one operation only if each direction ran one operation.
		byDir := map[string]*fioAgg{}
		for _, k := range keys {
			a := aggs[k]
			if prev := byDir[a.dir]; prev != nil && prev.op != a.op {
				return nil, perr(ToolFio, "client mode ran %s and %s in one run; the %q aggregate mixes them", prev.op, a.op, fioAllClients)
			}
			byDir[a.dir] = a
		}
		if all.Error != 0 {
			return nil, perr(ToolFio, "%q reports error %d", fioAllClients, all.Error)
		}
		for _, dn := range []string{"read", "write"} {
			a := byDir[dn]
			if a == nil {
				continue
			}
			d := map[string]*fioDir{"read": all.Read, "write": all.Write}[dn]
			if !d.active() || d.Runtime <= 0 {
				return nil, perr(ToolFio, "%q has no %s figures although its clients do", fioAllClients, dn)
			}
			r, err := fioResult(a.op, a.mixed, d.IOBytes, d.TotalIOs, d.Runtime)
			if err != nil {
				return nil, err
			}
			r.Processes, r.Nodes, r.BlockSize = a.processes, len(a.perClient), a.blockSize
			if r.MinBytesPerProcess, err = count(ToolFio, "bytes per process", a.minBytes); err != nil {
				return nil, err
			}
			if r.Clients, err = fioClients(a); err != nil {
				return nil, err
			}
			p.Results = append(p.Results, r)
		}
	} else {
		for _, k := range keys {
			a := aggs[k]
			r, err := fioResult(a.op, a.mixed, a.bytes, a.ios, a.runtimeMS)
			if err != nil {
				return nil, err
			}
			r.Processes, r.BlockSize = a.processes, a.blockSize
			if r.MinBytesPerProcess, err = count(ToolFio, "bytes per process", a.minBytes); err != nil {
				return nil, err
			}
			if clientMode {
				r.Nodes = len(a.perClient)
				if r.Clients, err = fioClients(a); err != nil {
					return nil, err
				}
			}
			if len(keys) > 1 && countGroups(aggs) > 1 {
				r.Label = fmt.Sprintf("group %d", a.group)
			}
			p.Results = append(p.Results, r)
		}
	}
	return p.finish()
}

func countGroups(aggs map[string]*fioAgg) int {
	g := map[int]bool{}
	for _, a := range aggs {
		g[a.group] = true
	}
	return len(g)
}

func fioResult(op Operation, mixed bool, bytes, ios, runtimeMS float64) (Result, error) {
	sec := runtimeMS / 1000
	r := Result{Operation: op, Mixed: mixed, RuntimeSeconds: sec}
	// The bounds first: a garbled total is best reported as the rate it makes.
	bps := bytes / sec
	if op == OpCreate || op == OpStat || op == OpDelete {
		bps = 0
	}
	if err := checkBounds(bps, 0, ios/sec, sec); err != nil {
		return r, perr(ToolFio, "%s: %v", op, err)
	}
	var err error
	if r.Ops, err = count(ToolFio, "total_ios", ios); err != nil {
		return r, err
	}
	if ios > 0 {
		r.OpsPerSecond = ios / sec
	}
	switch op {
	case OpCreate, OpStat, OpDelete:
		// Metadata engines account the nominal file size as I/O; no data moves.
	default:
		if r.Bytes, err = count(ToolFio, "io_bytes", bytes); err != nil {
			return r, err
		}
		r.BytesPerSecond = bytes / sec
	}
	return r, nil
}

func fioClients(a *fioAgg) ([]ClientResult, error) {
	var cs []ClientResult
	for _, h := range a.clientKeys {
		c := a.perClient[h]
		r, err := fioResult(a.op, a.mixed, c.bytes, c.ios, c.runtimeMS)
		if err != nil {
			return nil, err
		}
		cs = append(cs, ClientResult{Host: h, BytesPerSecond: r.BytesPerSecond, OpsPerSecond: r.OpsPerSecond,
			Processes: c.processes, RuntimeSeconds: r.RuntimeSeconds})
	}
	return cs, nil
}

// ParseSize parses a size the way fio and the agent's flags write it: a number with an
// optional binary suffix k, m, g, t (case-insensitive, optional "i"/"B": 1M = 1MiB = 1048576).
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("empty size")
	}
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "b")
	t = strings.TrimSuffix(strings.TrimSuffix(t, "i"), "I")
	mult := int64(1)
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		case 't', 'T':
			mult = 1 << 40
		}
		if mult > 1 {
			t = t[:n-1]
		}
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	if v > (1<<62)/mult {
		return 0, fmt.Errorf("size %q too large", s)
	}
	return v * mult, nil
}
