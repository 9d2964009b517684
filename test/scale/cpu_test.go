package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestReadStat(t *testing.T) {
	// A command may hold spaces and parentheses; the fields start after the last ')'.
	file := filepath.Join(t.TempDir(), "stat")
	line := "4242 (kube (api) server) S 17 4242 4242 0 -1 4194560 100 0 0 0 250 125 0 0 20 0 12 0 100 0\n"
	if err := os.WriteFile(file, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	comm, fields, ok := readStat(file)
	if !ok || comm != "kube (api) server" || fields[1] != "17" {
		t.Fatalf("readStat = %q, %q, %v", comm, fields, ok)
	}
	if got := statCPU(fields); got != 3750*time.Millisecond {
		t.Errorf("statCPU = %s, want 3.75s (250 + 125 ticks)", got)
	}
	if _, _, ok := readStat(filepath.Join(t.TempDir(), "gone")); ok {
		t.Error("a process that is gone read as ok")
	}
}

func TestReadCPUOfThisMachine(t *testing.T) {
	// This process's CPU grows by whole ticks: spin until it has grown by one.
	start := readCPU(os.Getpid())
	var d cpuTimes
	sink := 0
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		for i := range 10_000_000 {
			sink += i * i
		}
		if d = readCPU(os.Getpid()).sub(start); d.harness > 0 {
			break
		}
	}
	if start.total <= 0 || d.harness <= 0 || d.busy < 0 || d.busy > d.total {
		t.Errorf("readCPU: at first %+v, then %+v more (%d)", start, d, sink)
	}
}
