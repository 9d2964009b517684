package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/beeburst/beeburst/internal/limits"
)

// ParseError is a parser's refusal of an output it cannot trust. Its message names the tool.
type ParseError struct {
	Tool string
	Msg  string
}

func (e *ParseError) Error() string { return e.Tool + ": " + e.Msg }

func perr(tool, format string, args ...any) error {
	return &ParseError{Tool: tool, Msg: fmt.Sprintf(format, args...)}
}

// Parse parses one output of tool (fio, iperf3, ior, mdtest).
func Parse(tool string, out []byte) (*Parsed, error) {
	switch tool {
	case ToolFio:
		return ParseFio(out)
	case ToolIperf3:
		return ParseIperf3(out)
	case ToolIOR:
		return ParseIOR(out)
	case ToolMdtest:
		return ParseMdtest(out)
	}
	return nil, fmt.Errorf("unknown tool %q (want fio, iperf3, ior or mdtest)", tool)
}

// Tools that Parse understands.
var ParseTools = []string{ToolFio, ToolIperf3, ToolIOR, ToolMdtest}

// decodeJSONObject finds the first line that starts with '{' (text lines may precede the
// JSON: fio's client mode, warnings) and decodes one JSON object from there. Whatever follows
// the object is ignored. A missing, truncated or garbled object is an error naming tool.
func decodeJSONObject(tool string, out []byte, v any) error {
	start := -1
	for i := 0; i < len(out); {
		j := i
		for j < len(out) && (out[j] == ' ' || out[j] == '\t' || out[j] == '\r') {
			j++
		}
		if j < len(out) && out[j] == '{' {
			start = j
			break
		}
		nl := bytes.IndexByte(out[i:], '\n')
		if nl < 0 {
			break
		}
		i += nl + 1
	}
	if start < 0 {
		if len(bytes.TrimSpace(out)) == 0 {
			return perr(tool, "output is empty")
		}
		return perr(tool, "no JSON object in output (was JSON output requested?)")
	}
	dec := json.NewDecoder(bytes.NewReader(out[start:]))
	if err := dec.Decode(v); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
			return perr(tool, "JSON output is truncated (%v)", err)
		case errors.As(err, &se):
			return perr(tool, "JSON output is garbled at byte %d: %v", int64(start)+se.Offset, err)
		case errors.As(err, &te):
			return perr(tool, "JSON output has an unexpected value for %s: %v", te.Field, err)
		}
		return perr(tool, "JSON output cannot be read: %v", err)
	}
	return nil
}

// finitePositive reports whether x is a usable measurement.
func finitePositive(x float64) bool {
	return x > 0 && !math.IsInf(x, 0) && !math.IsNaN(x)
}

// finish makes the text a tool printed safe to show and to carry in JSON, then checks the
// result: what every parser returns.
func (p *Parsed) finish() (*Parsed, error) {
	p.Version = printable(p.Version, 128)
	for i := range p.Results {
		for j := range p.Results[i].Clients {
			p.Results[i].Clients[j].Host = printable(p.Results[i].Clients[j].Host, 253+6)
		}
	}
	if err := p.Check(); err != nil {
		return nil, err
	}
	return p, nil
}

// printable is s as valid UTF-8 without control characters, cut to max bytes. Version
// strings and host names come from the tools' output: invalid UTF-8 would not survive the
// JSON of `agent parse` and the Report (encoding/json replaces it), and control characters
// would reach terminals through `agent parse` and kubectl.
func printable(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// maxProcesses bounds the processes of one result: MaxNodes nodes of MaxProcessesPerNode.
const maxProcesses = limits.MaxNodes * limits.MaxProcessesPerNode

// Check verifies the invariants every parser promises: at least one result, known operations,
// figures finite and positive where present, at least one figure per result, and every
// figure within the physical bounds of internal/limits - so that a garbled or forged output
// is refused here, naming the tool and the figure, and never clamped later into a published
// limit.
func (p *Parsed) Check() error {
	if len(p.Results) == 0 {
		return perr(p.Tool, "no results")
	}
	for _, r := range p.Results {
		if err := checkResult(r); err != nil {
			return perr(p.Tool, "%v", err)
		}
	}
	return nil
}

// checkResult checks one result: a known operation, at least one figure, every figure finite,
// positive where present and within the physical bounds, counts within theirs.
func checkResult(r Result) error {
	switch r.Operation {
	case OpWrite, OpRead, OpRandWrite, OpRandRead, OpCreate, OpStat, OpReadFile, OpDelete, OpTransfer:
	default:
		return fmt.Errorf("unknown operation %q", r.Operation)
	}
	if r.BytesPerSecond == 0 && r.OpsPerSecond == 0 {
		return fmt.Errorf("%s: no figure", r.Operation)
	}
	for _, x := range []float64{r.BytesPerSecond, r.OpsPerSecond, r.RuntimeSeconds, r.StonewallBytesPerSecond} {
		if x != 0 && !finitePositive(x) {
			return fmt.Errorf("%s: figure %v is not a positive finite number", r.Operation, x)
		}
	}
	if err := checkBounds(r.BytesPerSecond, r.StonewallBytesPerSecond, r.OpsPerSecond, r.RuntimeSeconds); err != nil {
		return fmt.Errorf("%s: %v", r.Operation, err)
	}
	for _, n := range []struct {
		what   string
		v, max int64
	}{{"processes", int64(r.Processes), maxProcesses}, {"nodes", int64(r.Nodes), limits.MaxNodes},
		{"bytes", r.Bytes, math.MaxInt64}, {"operations", r.Ops, math.MaxInt64}, {"block size", r.BlockSize, math.MaxInt64},
		{"retransmits", r.Retransmits, math.MaxInt64}, {"bytes per process", r.MinBytesPerProcess, math.MaxInt64}} {
		if n.v < 0 || n.v > n.max {
			return fmt.Errorf("%s: %s %d is not from 0 to %d", r.Operation, n.what, n.v, n.max)
		}
	}
	for _, c := range r.Clients {
		for _, x := range []float64{c.BytesPerSecond, c.OpsPerSecond, c.RuntimeSeconds} {
			if x != 0 && !finitePositive(x) {
				return fmt.Errorf("%s: client %s: figure %v is not a positive finite number", r.Operation, c.Host, x)
			}
		}
		if err := checkBounds(c.BytesPerSecond, 0, c.OpsPerSecond, c.RuntimeSeconds); err != nil {
			return fmt.Errorf("%s: client %s: %v", r.Operation, c.Host, err)
		}
		if c.Processes < 0 || c.Processes > maxProcesses {
			return fmt.Errorf("%s: client %s: processes %d is not from 0 to %d", r.Operation, c.Host, c.Processes, maxProcesses)
		}
	}
	return nil
}

// checkBounds checks a result's figures against the physical bounds (limits.Max*).
func checkBounds(bps, stonewall, ops, runtime float64) error {
	if err := limits.CheckBytesPerSecond(bps, limits.MaxBytesPerSecond); err != nil {
		return fmt.Errorf("bandwidth %w", err)
	}
	if err := limits.CheckBytesPerSecond(stonewall, limits.MaxBytesPerSecond); err != nil {
		return fmt.Errorf("stonewall bandwidth %w", err)
	}
	if err := limits.CheckOpsPerSecond(ops); err != nil {
		return fmt.Errorf("operation rate %w", err)
	}
	if err := limits.CheckRuntimeSeconds(runtime); err != nil {
		return fmt.Errorf("runtime %w", err)
	}
	return nil
}

// count converts a tool's total (bytes, operations), printed as a JSON number, to int64: a
// total that is negative, not finite or beyond int64 is refused rather than converted, since
// Go's conversion of such a float is implementation-defined (it wraps on amd64).
func count(tool, what string, v float64) (int64, error) {
	if !(v >= 0) || v >= math.MaxInt64 {
		return 0, perr(tool, "%s %g is not a count from 0 to %d", what, v, int64(math.MaxInt64))
	}
	return int64(v), nil
}
