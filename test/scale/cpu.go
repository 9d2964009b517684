package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc's CPU times (100 on Linux).
const clockTicks = 100

// cpuTimes is where the machine's CPU went up to a moment, from /proc: the control plane
// (kube-apiserver and etcd, which envtest starts as this process's children), the manager,
// this process (the simulated kubelet, the observer, the arrivals) and the machine as a whole.
// The difference of two tells whether a slow API server was short of CPU, and who used it.
type cpuTimes struct {
	apiserver, etcd, manager, harness time.Duration
	// busy is every CPU's time not idle; total adds the idle time (CPUs x wall time).
	busy, total time.Duration
}

func (a cpuTimes) sub(b cpuTimes) cpuTimes {
	return cpuTimes{
		apiserver: a.apiserver - b.apiserver, etcd: a.etcd - b.etcd, manager: a.manager - b.manager,
		harness: a.harness - b.harness, busy: a.busy - b.busy, total: a.total - b.total,
	}
}

// readCPU samples the CPU times now; managerPID is the manager's process.
func readCPU(managerPID int) cpuTimes {
	var t cpuTimes
	t.manager, _ = procCPU(managerPID)
	t.harness, _ = procCPU(os.Getpid())
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		comm, fields, ok := readStat(f)
		if !ok || fields[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		switch comm {
		case "kube-apiserver":
			t.apiserver = statCPU(fields)
		case "etcd":
			t.etcd = statCPU(fields)
		}
	}
	t.busy, t.total = machineCPU()
	return t
}

// procCPU is the user and system time of process pid.
func procCPU(pid int) (time.Duration, bool) {
	_, fields, ok := readStat(fmt.Sprintf("/proc/%d/stat", pid))
	if !ok {
		return 0, false
	}
	return statCPU(fields), true
}

// readStat reads a /proc/<pid>/stat file: the command and the fields after its closing
// parenthesis (the state first, then the parent's pid, ...). The command may hold spaces.
func readStat(file string) (comm string, fields []string, ok bool) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return "", nil, false
	}
	s := string(raw)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return "", nil, false
	}
	fields = strings.Fields(s[end+1:])
	if len(fields) < 13 {
		return "", nil, false
	}
	return s[open+1 : end], fields, true
}

// statCPU is utime + stime: the 14th and 15th fields of the line, the 12th and 13th after
// the command.
func statCPU(fields []string) time.Duration {
	ut, _ := strconv.ParseInt(fields[11], 10, 64)
	st, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(ut+st) * time.Second / clockTicks
}

// machineCPU is the time of all CPUs together from /proc/stat's first line: busy (user,
// nice, system, irq, softirq, steal) and in all (busy, idle and iowait).
func machineCPU() (busy, total time.Duration) {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	f := strings.Fields(strings.SplitN(string(raw), "\n", 2)[0])
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0
	}
	var v [8]int64
	for i := range v {
		v[i], _ = strconv.ParseInt(f[i+1], 10, 64)
	}
	// user nice system idle iowait irq softirq steal
	b := v[0] + v[1] + v[2] + v[5] + v[6] + v[7]
	return time.Duration(b) * time.Second / clockTicks, time.Duration(b+v[3]+v[4]) * time.Second / clockTicks
}
