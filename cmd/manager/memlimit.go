package main

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// memoryLimitShare is the share of the container's memory limit given to the Go runtime as
// its soft limit; the rest is for what the runtime does not count (the binary's text, cgo,
// the kernel's page cache charged to the container).
const memoryLimitShare = 0.9

// goMemLimitEnv is the Go runtime's own setting of its soft memory limit, which wins.
const goMemLimitEnv = "GOMEMLIMIT"

// setGoMemoryLimit gives the Go runtime a soft memory limit below the container's, unless
// GOMEMLIMIT sets one: the garbage collector otherwise lets the heap grow to twice what is
// live (GOGC=100) whatever the container allows, and a manager whose live heap is half its
// limit is killed by the kernel where it could have collected sooner. It returns the limit
// set, 0 for none (no container limit, or GOMEMLIMIT given).
func setGoMemoryLimit() int64 {
	if os.Getenv(goMemLimitEnv) != "" {
		return 0
	}
	limit := containerMemoryLimit(os.ReadFile)
	if limit <= 0 {
		return 0
	}
	soft := int64(float64(limit) * memoryLimitShare)
	debug.SetMemoryLimit(soft)
	return soft
}

// containerMemoryLimit is the memory limit of the process's cgroup in bytes (cgroup v2's
// memory.max, else v1's memory.limit_in_bytes), 0 when there is none or it cannot be read.
func containerMemoryLimit(read func(string) ([]byte, error)) int64 {
	for _, path := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		raw, err := read(path)
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(raw))
		if s == "max" {
			return 0
		}
		n, err := strconv.ParseInt(s, 10, 64)
		// cgroup v1 says "no limit" with the largest page-aligned value.
		if err != nil || n <= 0 || n >= 1<<60 {
			return 0
		}
		return n
	}
	return 0
}
