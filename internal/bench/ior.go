package bench

import (
	"regexp"
)

const mib = 1 << 20

type iorOutput struct {
	Version string `json:"Version"`
	Tests   []struct {
		TestID     int `json:"TestID"`
		Parameters struct {
			RandomOffset int `json:"randomOffset"`
			FilePerProc  int `json:"filePerProc"`
		} `json:"Parameters"`
	} `json:"tests"`
	Summary []struct {
		Operation          string   `json:"operation"`
		TestID             int      `json:"TestID"`
		TransferSize       int64    `json:"transferSize"`
		NumTasks           int      `json:"numTasks"`
		TasksPerNode       int      `json:"tasksPerNode"`
		FilePerProc        int      `json:"filePerProc"`
		BwMeanMIB          *float64 `json:"bwMeanMIB"`
		OPsMean            *float64 `json:"OPsMean"`
		MeanTime           *float64 `json:"MeanTime"`
		StoneWallbwMeanMIB *float64 `json:"StoneWallbwMeanMIB"`
	} `json:"summary"`
}

// IOR prints C doubles with %f, so a NaN or infinity comes out as a bare nan/inf, which is
// not JSON. Such values become null (absent) before decoding.
var iorNonFinite = regexp.MustCompile(`(:\s*)-?(nan|inf|NaN|Inf|INF|NAN)\b`)

// ParseIOR parses IOR's JSON summary (`-O summaryFormat=JSON`, from the summaryFile or from
// stdout). summary[].bwMeanMIB is the aggregate over all tasks in MiB/s (converted to bytes
// per second); StoneWallbwMeanMIB is per task (multiplied by numTasks). The operation comes
// from what IOR ran: its summary's operation, random offsets (-z) making it randwrite or
// randread.
func ParseIOR(out []byte) (*Parsed, error) {
	var o iorOutput
	if err := decodeJSONObject(ToolIOR, iorNonFinite.ReplaceAll(out, []byte("${1}null")), &o); err != nil {
		return nil, err
	}
	if o.Summary == nil {
		return nil, perr(ToolIOR, "no \"summary\" in output (run IOR with -O summaryFormat=JSON)")
	}
	if len(o.Summary) == 0 {
		return nil, perr(ToolIOR, "the summary is empty (no write or read ran)")
	}
	random := map[int]bool{}
	for _, t := range o.Tests {
		random[t.TestID] = t.Parameters.RandomOffset != 0
	}
	p := &Parsed{Tool: ToolIOR, Version: o.Version}
	for _, s := range o.Summary {
		var op Operation
		switch s.Operation {
		case "write":
			op = OpWrite
			if random[s.TestID] {
				op = OpRandWrite
			}
		case "read":
			op = OpRead
			if random[s.TestID] {
				op = OpRandRead
			}
		default:
			return nil, perr(ToolIOR, "unknown operation %q in summary", s.Operation)
		}
		if s.BwMeanMIB == nil || !finitePositive(*s.BwMeanMIB) {
			return nil, perr(ToolIOR, "%s: bwMeanMIB missing or not positive", s.Operation)
		}
		if s.NumTasks <= 0 {
			return nil, perr(ToolIOR, "%s: numTasks missing", s.Operation)
		}
		r := Result{
			Operation:      op,
			BytesPerSecond: *s.BwMeanMIB * mib,
			Processes:      s.NumTasks,
			BlockSize:      s.TransferSize,
			Access:         "shared-file",
		}
		if s.FilePerProc != 0 {
			r.Access = "file-per-process"
		}
		if s.TasksPerNode > 0 {
			r.Nodes = s.NumTasks / s.TasksPerNode
		}
		if s.OPsMean != nil && finitePositive(*s.OPsMean) {
			r.OpsPerSecond = *s.OPsMean
		}
		if s.MeanTime != nil && finitePositive(*s.MeanTime) {
			r.RuntimeSeconds = *s.MeanTime
		}
		if s.StoneWallbwMeanMIB != nil && finitePositive(*s.StoneWallbwMeanMIB) {
			r.StonewallBytesPerSecond = *s.StoneWallbwMeanMIB * mib * float64(s.NumTasks)
		}
		p.Results = append(p.Results, r)
	}
	return p.finish()
}
