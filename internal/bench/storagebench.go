package bench

// The StorageBench task of the beegfs engine leaves the BeeGFS CLI's status counts, error
// lines and per-target rows in its termination message (beegfs.StorageBenchScript);
// ParseStorageBench reads them.

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/beeburst/beeburst/internal/limits"
)

// StorageBenchTarget is one storage target's StorageBench figures.
type StorageBenchTarget struct {
	// ID is the numeric target ID (StorageTargetID), Node the Kubernetes node it is on.
	ID   int
	Node string
	// Write and Read are bytes per second (the servers report KiB/s).
	Write, Read int64
}

// StorageBenchResult is a run's figures: per target, and per node as the sum over its targets
// (the targets of a node share its storage path and ran at the same time, so the sum is the
// node's aggregate under all streams, comparable with fio's figure for the node).
type StorageBenchResult struct {
	Targets []StorageBenchTarget
	Nodes   map[string]StorageBenchNode
	// Notes are what a reader of the figures should know that does not invalidate them.
	Notes []string
}

// StorageBenchNode is one node's sum over its targets.
type StorageBenchNode struct {
	Write, Read int64
	Targets     int
}

var (
	// A "Benchmark Results by Target" row: type, throughput (raw "<n>kiB/s", or "<x> <IEC>B/s"
	// without --raw), target ID ("s:<id>", beegfs LegacyId), then alias and node alias.
	sbRowRe = regexp.MustCompile(`(?i)^(write|read)\s+([0-9]+(?:\.[0-9]+)?)\s*([kmgtpe]i)?B/s\s+s:([0-9]+)\b`)
	// The "Overall Benchmark Status" counts, under the header of the nine states.
	sbCountsRe  = regexp.MustCompile(`^[0-9]+( [0-9]+){8}$`)
	sbSectionRe = regexp.MustCompile(`^== (write|read|cleanup) \(exit ([0-9]+)\) ==$`)
)

// terminationMessageLimit is what the kubelet keeps of a termination message.
const terminationMessageLimit = 4096

// The columns of "Overall Benchmark Status", in the CLI's order (printOverallStatus).
var sbStates = []string{"uninitialized", "initialized", "error", "running", "stopping", "stopped", "finishing", "finished", "unknown"}

var iecFactor = map[string]float64{"": 1, "ki": 1 << 10, "mi": 1 << 20, "gi": 1 << 30, "ti": 1 << 40, "pi": 1 << 50, "ei": 1 << 60}

// ParseStorageBench reads the StorageBench task's termination message (beegfs.StorageBenchScript) into
// per-target and per-node figures. nodes are the burst buffer's nodes in order: target ID
// targetID(i, t) is target t of nodes[i]. Every target of every node must have a write and a
// read figure above zero, within the bound of a device, and no storage node may report an
// error.
func ParseStorageBench(msg string, nodes []string, targetsPerNode int, targetID func(node, target int) int) (StorageBenchResult, error) {
	type fig struct{ write, read int64 }
	figs := map[int]*fig{}
	section := ""
	exits := map[string]int{}
	var problems, notes []string
	header := false
	seen := map[string]bool{} // "<op>/<id>" rows of the current section
	for _, line := range strings.Split(msg, "\n") {
		line = strings.Join(strings.Fields(strings.ReplaceAll(line, "|", " ")), " ")
		if line == "" {
			continue
		}
		if m := sbSectionRe.FindStringSubmatch(line); m != nil {
			section = m[1]
			code, err := strconv.Atoi(m[2])
			if err != nil {
				code = -1 // not a shell's exit code: not a success either
			}
			exits[section] = code
			seen = map[string]bool{}
			continue
		}
		if strings.HasPrefix(strings.ToLower(line), "uninitialized ") {
			header = true
			continue
		}
		if header && sbCountsRe.MatchString(line) {
			header = false
			counts := strings.Fields(line)
			for _, i := range []int{2, 3, 4, 6} { // error, running, stopping, finishing
				n, err := strconv.Atoi(counts[i])
				switch {
				case err != nil:
					// Too many digits for a count of nodes: garbled, and it could hide errors.
					problems = append(problems, fmt.Sprintf("%s: the %s count %q cannot be read", section, sbStates[i], counts[i]))
				case n > 0 && i == 2:
					problems = append(problems, fmt.Sprintf("%s: %d storage node(s) report an error", section, n))
				case n > 0:
					problems = append(problems, fmt.Sprintf("%s: %d storage node(s) still %s", section, n, sbStates[i]))
				}
			}
			continue
		}
		header = false
		m := sbRowRe.FindStringSubmatch(line)
		if m == nil {
			// A storage node's status row ("Benchmark Status by Node", printed when any node
			// failed; the nodes without error say "(no error)") or the CLI's own error.
			l := strings.ToLower(line)
			if section != "" && strings.Contains(l, "error") && !strings.Contains(l, "(no error)") && !strings.HasPrefix(l, "node id ") {
				if section == "cleanup" {
					notes = append(notes, "cleanup: "+line)
				} else {
					problems = append(problems, section+": "+line)
				}
			}
			continue
		}
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			return StorageBenchResult{}, fmt.Errorf("StorageBench row %q: %v", line, err)
		}
		v *= iecFactor[strings.ToLower(m[3])]
		// Bounded before the conversion to int64 (Go's conversion of a larger float is
		// implementation-defined) and so that the node sums below stay far from overflow.
		if err := limits.CheckBytesPerSecond(v, limits.MaxDeviceBytesPerSecond); err != nil {
			return StorageBenchResult{}, fmt.Errorf("StorageBench row %q: a target's throughput of %w", line, err)
		}
		bps := int64(v)
		id, err := strconv.Atoi(m[4])
		if err != nil || id > math.MaxUint16 {
			// BeeGFS target IDs are 16-bit (NumNodeID).
			return StorageBenchResult{}, fmt.Errorf("StorageBench row %q: target ID %q is not a BeeGFS target ID", line, m[4])
		}
		op := strings.ToLower(m[1])
		if seen[op+"/"+m[4]] {
			return StorageBenchResult{}, fmt.Errorf("StorageBench row %q: a second %s figure for target %d in one run", line, op, id)
		}
		seen[op+"/"+m[4]] = true
		f := figs[id]
		if f == nil {
			f = &fig{}
			figs[id] = f
		}
		if op == "write" {
			f.write = bps
		} else {
			f.read = bps
		}
	}
	for _, op := range []string{"write", "read"} {
		code, ok := exits[op]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("no %s run in the output", op))
		case code != 0:
			problems = append(problems, fmt.Sprintf("beegfs benchmark start (%s) exited %d", op, code))
		}
	}
	res := StorageBenchResult{Nodes: map[string]StorageBenchNode{}, Notes: notes}
	if code, ok := exits["cleanup"]; ok && code != 0 {
		// The figures stand; the files go with the targets at teardown.
		res.Notes = append(res.Notes, fmt.Sprintf("beegfs benchmark cleanup exited %d: the benchmark files stay on the targets until teardown", code))
	}
	var missing []string
	for i, node := range nodes {
		for t := range max(1, targetsPerNode) {
			id := targetID(i, t)
			f := figs[id]
			delete(figs, id)
			if f == nil || f.write <= 0 || f.read <= 0 {
				missing = append(missing, fmt.Sprintf("%d (%s)", id, node))
				continue
			}
			res.Targets = append(res.Targets, StorageBenchTarget{ID: id, Node: node, Write: f.write, Read: f.read})
			n := res.Nodes[node]
			var okW, okR bool
			n.Write, okW = addBytesPerSecond(n.Write, f.write)
			n.Read, okR = addBytesPerSecond(n.Read, f.read)
			if !okW || !okR {
				return res, fmt.Errorf("StorageBench: the targets of node %s add up to more than %s: the figures are corrupt",
					node, limits.FormatBytesPerSecond(limits.MaxBytesPerSecond))
			}
			n.Targets++
			res.Nodes[node] = n
		}
	}
	if len(missing) > 0 {
		p := "no write and read figure for target(s) " + limitList(missing, 8)
		if len(msg) >= terminationMessageLimit-100 {
			p += fmt.Sprintf(" (the output filled the %d-byte termination message: too many targets for one report)", terminationMessageLimit)
		}
		problems = append(problems, p)
	}
	if len(figs) > 0 {
		var ids []int
		for id := range figs {
			ids = append(ids, id)
		}
		sort.Ints(ids)
		problems = append(problems, fmt.Sprintf("figures for target(s) this burst buffer does not have: %v", ids))
	}
	if len(problems) > 0 {
		return res, fmt.Errorf("StorageBench: %s", strings.Join(problems, "; "))
	}
	return res, nil
}

// addBytesPerSecond adds two non-negative figures; ok is false when the sum exceeds
// limits.MaxBytesPerSecond (which also keeps it from wrapping around int64).
func addBytesPerSecond(a, b int64) (sum int64, ok bool) {
	if a < 0 || b < 0 || a > int64(limits.MaxBytesPerSecond)-b {
		return 0, false
	}
	return a + b, true
}

func limitList(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, "; ")
	}
	return strings.Join(items[:n], "; ") + fmt.Sprintf("; and %d more", len(items)-n)
}
