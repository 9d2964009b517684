package bench

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beeburst/beeburst/internal/limits"
)

// beegfsTestdata holds the beegfs engine's golden termination message of the task and the
// BeeGFS CLI outputs its tests run the task's script on.
var beegfsTestdata = filepath.Join("..", "engine", "beegfs", "testdata")

// storageTargetID is the beegfs engine's numbering (beegfs.StorageTargetID), which this package
// cannot import.
func storageTargetID(i, t int) int { return i*16 + t + 1 }

// FuzzParseStorageBench: the termination message is written by a script around the BeeGFS
// CLI, whose output is the storage servers' word. No panic; an accepted run has a write and
// a read figure for exactly the burst buffer's targets, each positive and within a device's
// bound, and node sums that are the sums of their targets (no wrap-around) within the bound
// of any figure.
func FuzzParseStorageBench(f *testing.F) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(beegfsTestdata, name))
		if err != nil {
			f.Fatal(err)
		}
		return string(b)
	}
	log := read("storagebench-termination-log.txt")
	f.Add(log, uint8(2))
	f.Add(log[:len(log)/2], uint8(2))
	f.Add(log, uint8(1))
	f.Add("== write (exit 0) ==\n"+read("storagebench/write-ok.out")+"== read (exit 0) ==\n"+read("storagebench/read-ok.out"), uint8(2))
	f.Add("== write (exit 0) ==\n"+read("storagebench/write-error.out")+"== read (exit 0) ==\n"+read("storagebench/read-ok.out"), uint8(1))
	f.Add("== write (exit 0) ==\n"+read("storagebench/write-old-cli.out")+"== read (exit 0) ==\n| read | 3GiB/s | s:1 |\n| read | 2.50 GiB/s | s:17 |\n", uint8(1))
	f.Add("", uint8(0))
	nodes := []string{"a", "b"}
	f.Fuzz(func(t *testing.T, msg string, targetsPerNode uint8) {
		res, err := ParseStorageBench(msg, nodes, int(targetsPerNode), storageTargetID)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "StorageBench") {
				t.Fatalf("error %q does not say StorageBench", err)
			}
			return
		}
		per := max(1, int(targetsPerNode))
		if len(res.Targets) != len(nodes)*per || len(res.Nodes) != len(nodes) {
			t.Fatalf("%d targets on %d nodes accepted, want %d on %d", len(res.Targets), len(res.Nodes), len(nodes)*per, len(nodes))
		}
		sums := map[string]StorageBenchNode{}
		for _, tg := range res.Targets {
			for _, v := range []int64{tg.Write, tg.Read} {
				if v <= 0 || v > limits.MaxDeviceBytesPerSecond {
					t.Fatalf("target %d: figure %d accepted", tg.ID, v)
				}
			}
			s := sums[tg.Node]
			s.Write, s.Read, s.Targets = s.Write+tg.Write, s.Read+tg.Read, s.Targets+1
			sums[tg.Node] = s
		}
		for n, s := range sums {
			if res.Nodes[n] != s || s.Targets != per || s.Write > limits.MaxBytesPerSecond || s.Read > limits.MaxBytesPerSecond {
				t.Fatalf("node %s: %+v, targets sum to %+v", n, res.Nodes[n], s)
			}
		}
	})
}

func TestAddBytesPerSecond(t *testing.T) {
	if v, ok := addBytesPerSecond(1<<40, 1<<40); !ok || v != 1<<41 {
		t.Errorf("%d %v", v, ok)
	}
	for _, c := range [][2]int64{{math.MaxInt64, 1}, {1e17, 1}, {-1, 5}, {5, -1}, {math.MaxInt64 / 2, math.MaxInt64/2 + 2}} {
		if v, ok := addBytesPerSecond(c[0], c[1]); ok {
			t.Errorf("%d + %d = %d accepted", c[0], c[1], v)
		}
	}
}
