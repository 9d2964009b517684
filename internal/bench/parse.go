package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
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

// Check verifies the invariants every parser promises: at least one result, known operations,
// figures finite and positive where present, and at least one figure per result.
func (p *Parsed) Check() error {
	if len(p.Results) == 0 {
		return perr(p.Tool, "no results")
	}
	for _, r := range p.Results {
		switch r.Operation {
		case OpWrite, OpRead, OpRandWrite, OpRandRead, OpCreate, OpStat, OpReadFile, OpDelete, OpTransfer:
		default:
			return perr(p.Tool, "unknown operation %q", r.Operation)
		}
		if r.BytesPerSecond == 0 && r.OpsPerSecond == 0 {
			return perr(p.Tool, "%s: no figure", r.Operation)
		}
		for _, x := range []float64{r.BytesPerSecond, r.OpsPerSecond, r.RuntimeSeconds, r.StonewallBytesPerSecond} {
			if x != 0 && !finitePositive(x) {
				return perr(p.Tool, "%s: figure %v is not a positive finite number", r.Operation, x)
			}
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
