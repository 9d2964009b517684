// Command docker-runc is an OCI runtime for dockerd on machines whose capability bounding set
// lacks some capabilities (ours lack CAP_SYS_RESOURCE): it fits each container's process to
// what this machine can grant, then executes the real runc.
//
// A privileged container asks for every capability the daemon knows. runc cannot raise a
// capability that is not in its own bounding set, so it fails with "unable to apply caps:
// operation not permitted" and `docker run --privileged` (every kind node) never starts.
// Before `create`/`run` (the bundle's config.json) and `exec` (the --process file), this
// wrapper
//   - drops from every capability set the capabilities missing from its own bounding set;
//   - raises an oomScoreAdj below its own to its own (lowering it needs CAP_SYS_RESOURCE);
//   - lowers rlimits above its own hard limits to them (raising them needs CAP_SYS_RESOURCE).
//
// On a machine with every capability it changes nothing.
//
// Configured through dockerd (hack/docker.sh): --add-runtime caps=PATH --default-runtime caps.
//
//	DOCKER_RUNC      the real runc (default /usr/sbin/runc, Debian's)
//	DOCKER_RUNC_LOG  a file to append one line per changed container or process (optional)
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	runc := os.Getenv("DOCKER_RUNC")
	if runc == "" {
		runc = "/usr/sbin/runc"
	}
	if file, ok := specFile(os.Args[1:]); ok {
		if err := fitFile(file); err != nil {
			fmt.Fprintln(os.Stderr, "docker-runc:", err)
			os.Exit(1)
		}
	}
	if err := syscall.Exec(runc, append([]string{runc}, os.Args[1:]...), os.Environ()); err != nil {
		fmt.Fprintln(os.Stderr, "docker-runc: exec", runc, err)
		os.Exit(127)
	}
}

// specFile finds the JSON a runc command line will read a process from: the bundle's
// config.json for create and run, the --process file for exec (absent: nothing to fit,
// runc builds the process from its arguments without capabilities beyond the container's).
func specFile(args []string) (string, bool) {
	// runc's global flags that take a separate value.
	valued := map[string]bool{"--root": true, "--log": true, "--log-format": true, "--criu": true, "--rootless": true}
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		if valued[args[i]] {
			i++
		}
	}
	if i >= len(args) {
		return "", false
	}
	cmd, rest := args[i], args[i+1:]
	switch cmd {
	case "create", "run":
		bundle := "."
		if v, ok := flagValue(rest, "--bundle", "-b"); ok {
			bundle = v
		}
		return filepath.Join(bundle, "config.json"), true
	case "exec":
		if v, ok := flagValue(rest, "--process", "-p"); ok {
			return v, true
		}
	}
	return "", false
}

// flagValue returns the value of a flag given as "--name v", "--name=v" or "-n v".
func flagValue(args []string, long, short string) (string, bool) {
	for j := 0; j < len(args); j++ {
		a := args[j]
		switch {
		case a == "--":
			return "", false
		case (a == long || a == short) && j+1 < len(args):
			return args[j+1], true
		case strings.HasPrefix(a, long+"="):
			return strings.TrimPrefix(a, long+"="), true
		}
	}
	return "", false
}

func fitFile(path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	host, err := self()
	if err != nil {
		return err
	}
	out, changes, err := fit(raw, host)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if len(changes) == 0 {
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	tmp := path + ".docker-runc"
	if err := os.WriteFile(tmp, out, fi.Mode().Perm()); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	logLine(path + ": " + strings.Join(changes, "; "))
	return nil
}

// limits is what this process may grant: its bounding set (capability names as in OCI
// specs), its oom_score_adj and its hard rlimits by OCI name.
type limits struct {
	caps     map[string]bool
	oomScore int
	rlimits  map[string]uint64
}

// fit changes an OCI config.json (process under "process") or a process.json (the process
// itself) to what host allows, and says what it changed.
func fit(raw []byte, host limits) ([]byte, []string, error) {
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // keep 64-bit values exact
	if err := dec.Decode(&doc); err != nil {
		return nil, nil, err
	}
	proc := doc
	if p, ok := doc["process"].(map[string]any); ok {
		proc = p
	} else if _, ok := doc["ociVersion"]; ok {
		return raw, nil, nil // a config without a process
	}
	var changes []string
	if caps, ok := proc["capabilities"].(map[string]any); ok {
		dropped := map[string]bool{}
		for set, v := range caps {
			list, ok := v.([]any)
			if !ok {
				continue
			}
			kept := make([]any, 0, len(list))
			for _, c := range list {
				if name, ok := c.(string); ok && !host.caps[name] {
					dropped[name] = true
					continue
				}
				kept = append(kept, c)
			}
			caps[set] = kept
		}
		if len(dropped) > 0 {
			names := make([]string, 0, len(dropped))
			for n := range dropped {
				names = append(names, n)
			}
			slices.Sort(names)
			changes = append(changes, "dropped "+strings.Join(names, ","))
		}
	}
	if v, ok := proc["oomScoreAdj"].(json.Number); ok {
		if n, err := v.Int64(); err == nil && int(n) < host.oomScore {
			proc["oomScoreAdj"] = host.oomScore
			changes = append(changes, fmt.Sprintf("oomScoreAdj %d -> %d", n, host.oomScore))
		}
	}
	if rl, ok := proc["rlimits"].([]any); ok {
		for _, e := range rl {
			m, ok := e.(map[string]any)
			if !ok {
				continue
			}
			name, _ := m["type"].(string)
			max, ok := host.rlimits[name]
			if !ok {
				continue
			}
			for _, k := range []string{"hard", "soft"} {
				if v, ok := m[k].(json.Number); ok {
					if n, err := strconv.ParseUint(v.String(), 10, 64); err == nil && n > max {
						m[k] = max
						changes = append(changes, fmt.Sprintf("%s %s %d -> %d", name, k, n, max))
					}
				}
			}
		}
	}
	if len(changes) == 0 {
		return raw, nil, nil
	}
	out, err := json.Marshal(doc)
	return out, changes, err
}

// capNames are the capabilities by number (linux/capability.h), as OCI specs name them.
var capNames = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID",
	"CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE",
	"CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK",
	"CAP_IPC_OWNER", "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE",
	"CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE", "CAP_SYS_RESOURCE",
	"CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE", "CAP_AUDIT_WRITE",
	"CAP_AUDIT_CONTROL", "CAP_SETFCAP", "CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG",
	"CAP_WAKE_ALARM", "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF",
	"CAP_CHECKPOINT_RESTORE",
}

// capsFromMask names the capabilities of a CapBnd mask. A capability this table does not
// name is dropped from specs: never asked of the kernel rather than risked.
func capsFromMask(mask uint64) map[string]bool {
	caps := map[string]bool{}
	for i, n := range capNames {
		if mask&(1<<uint(i)) != 0 {
			caps[n] = true
		}
	}
	return caps
}

// rlimitNames maps OCI rlimit names to Linux resource numbers.
var rlimitNames = map[string]int{
	"RLIMIT_CPU": 0, "RLIMIT_FSIZE": 1, "RLIMIT_DATA": 2, "RLIMIT_STACK": 3, "RLIMIT_CORE": 4,
	"RLIMIT_RSS": 5, "RLIMIT_NPROC": 6, "RLIMIT_NOFILE": 7, "RLIMIT_MEMLOCK": 8, "RLIMIT_AS": 9,
	"RLIMIT_LOCKS": 10, "RLIMIT_SIGPENDING": 11, "RLIMIT_MSGQUEUE": 12, "RLIMIT_NICE": 13,
	"RLIMIT_RTPRIO": 14, "RLIMIT_RTTIME": 15,
}

func self() (limits, error) {
	l := limits{rlimits: map[string]uint64{}}
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return l, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CapBnd:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				return l, fmt.Errorf("CapBnd %q: %w", v, err)
			}
			l.caps = capsFromMask(mask)
		}
	}
	if l.caps == nil {
		return l, fmt.Errorf("no CapBnd in /proc/self/status")
	}
	b, err := os.ReadFile("/proc/self/oom_score_adj")
	if err != nil {
		return l, err
	}
	if l.oomScore, err = strconv.Atoi(strings.TrimSpace(string(b))); err != nil {
		return l, err
	}
	for name, n := range rlimitNames {
		var r syscall.Rlimit
		if syscall.Getrlimit(n, &r) == nil {
			l.rlimits[name] = r.Max
		}
	}
	return l, nil
}

func logLine(s string) {
	p := os.Getenv("DOCKER_RUNC_LOG")
	if p == "" {
		return
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s %s\n", time.Now().UTC().Format(time.RFC3339Nano), s)
}
