package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/beeburst/beeburst/internal/limits"
)

// DecodeReport reads a Report as the operator gets it, from a pod's termination message or a
// ConfigMap, and checks what the agent promises of it: a known phase and, wherever a figure
// is, a finite, non-negative one within the physical bounds (limits.Max*). The pod that wrote
// it runs on a node, beyond the operator's control; a figure that fails here would otherwise
// be clamped into a published limit or poison a cache without a word.
//
// It is the operator's one reader of the agent's replies; its error is a *ReportError.
func DecodeReport(msg []byte) (Report, error) {
	var r Report
	if err := json.Unmarshal(msg, &r); err != nil {
		return r, &ReportError{Unreadable: true, Err: err}
	}
	if err := r.Validate(); err != nil {
		return r, &ReportError{Command: r.Command, Err: err}
	}
	return r, nil
}

// ReportError is why DecodeReport refused a message: Unreadable when it is no report at all
// (a tool's or the kubelet's text in the termination message), else a report whose figures
// break the contract. Err is the cause alone, for a caller that says it in its own words.
type ReportError struct {
	Command    string
	Unreadable bool
	Err        error
}

func (e *ReportError) Error() string {
	if e.Unreadable {
		return "unreadable report: " + e.Err.Error()
	}
	return fmt.Sprintf("report of %q: %v", e.Command, e.Err)
}

func (e *ReportError) Unwrap() error { return e.Err }

// Unreadable says whether err is DecodeReport's for a message that is no report at all.
func Unreadable(err error) bool {
	var re *ReportError
	return errors.As(err, &re) && re.Unreadable
}

// Validate checks a Report's figures (see DecodeReport).
func (r Report) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch r.Phase {
	case PhaseSucceeded, PhaseFailed, PhaseCancelled:
	default:
		bad("unknown phase %q", r.Phase)
	}
	for i, res := range r.Results {
		if err := checkResult(res); err != nil {
			bad("result %d: %v", i+1, err)
		}
	}
	for i, sp := range r.Sweep {
		if sp.Nodes < 1 || sp.Nodes > limits.MaxNodes || sp.ProcessesPerNode < 1 || sp.ProcessesPerNode > limits.MaxProcessesPerNode {
			bad("sweep point %d: %d nodes x %d processes is outside 1..%d x 1..%d", i+1, sp.Nodes, sp.ProcessesPerNode,
				limits.MaxNodes, limits.MaxProcessesPerNode)
		}
		for j, res := range sp.Results {
			if err := checkResult(res); err != nil {
				bad("sweep point %d, result %d: %v", i+1, j+1, err)
			}
		}
	}
	if m := r.Monitor; m != nil {
		if err := limits.CheckRuntimeSeconds(m.IntervalSeconds); err != nil {
			bad("monitor interval: %v", err)
		}
		if m.Samples < 0 || m.Omitted < 0 {
			bad("monitor: negative counts")
		}
		for _, t := range append(append([]Throughput(nil), m.Interfaces...), m.Devices...) {
			for _, v := range append([]float64{t.PeakBytesPerSecond, t.MeanBytesPerSecond, t.InPeakBytesPerSecond,
				t.InMeanBytesPerSecond, t.OutPeakBytesPerSecond, t.OutMeanBytesPerSecond}, t.Intervals...) {
				if err := limits.CheckBytesPerSecond(v, limits.MaxBytesPerSecond); err != nil {
					bad("monitor: %s: %v", t.Name, err)
					break
				}
			}
		}
	}
	if r.FreeBytes != nil && *r.FreeBytes < 0 {
		bad("freeBytes %d is negative", *r.FreeBytes)
	}
	if h := r.Hardware; h != nil {
		if h.LinkMbps < 0 || float64(h.LinkMbps)*1e6 > limits.MaxLinkBitsPerSecond {
			bad("hardware: link speed %d Mb/s is not from 0 to %g", h.LinkMbps, limits.MaxLinkBitsPerSecond/1e6)
		}
		if h.FileSystemBytes < 0 {
			bad("hardware: file system size %d is negative", h.FileSystemBytes)
		}
	}
	if s := r.Stage; s != nil {
		if s.Files < 0 || s.Bytes < 0 || s.SkippedFiles < 0 || s.SkippedBytes < 0 || s.Dirs < 0 || s.Symlinks < 0 || s.Ignored < 0 {
			bad("stage: negative totals")
		}
		if err := limits.CheckRuntimeSeconds(s.Seconds); err != nil {
			bad("stage: seconds: %v", err)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	// One line: it becomes a condition's message.
	msgs := make([]string, 0, 9)
	for i, e := range errs {
		if i == 8 {
			msgs = append(msgs, fmt.Sprintf("and %d more", len(errs)-8))
			break
		}
		msgs = append(msgs, e.Error())
	}
	return errors.New(strings.Join(msgs, "; "))
}

// ReportMessage is the message of an agent report, or msg itself when it is none (a pod that
// failed before the agent wrote its report: the kubelet's reason, a log tail).
func ReportMessage(msg string) string {
	if r, err := DecodeReport([]byte(msg)); !Unreadable(err) && r.Message != "" {
		return r.Message
	}
	return msg
}
