// Command runc-blkio is the OCI runtime binary of the testbed's containerd: it adds block I/O
// throttles for the node's "NVMe" loop device to every container's OCI config at `create`,
// then executes the real runc. runc writes them into the container's own blkio cgroup before
// the container's first instruction runs, so the cap holds from the first byte. (A throttle on
// a parent cgroup does not reach the leaf cgroups on cgroup v1 - see ENVIRONMENT.md.)
//
// Configured through the environment of the per-node wrapper script containerd runs:
//
//	BEEBURST_RUNC        the real runc (default /usr/sbin/runc)
//	BEEBURST_BLKIO_DEV   MAJOR:MINOR of the node's loop device
//	BEEBURST_BLKIO_WBPS  write bytes/s cap (0 or empty: none)
//	BEEBURST_BLKIO_RBPS  read bytes/s cap (0 or empty: none)
//	BEEBURST_BLKIO_LOG   file to append one line per patched container (optional)
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	runc := env("BEEBURST_RUNC", "/usr/sbin/runc")
	if bundle, ok := createBundle(os.Args[1:]); ok {
		if err := patch(bundle); err != nil {
			// Refuse to start an unthrottled container: a testbed whose limits are not
			// enforced would make every later measurement meaningless.
			fmt.Fprintln(os.Stderr, "runc-blkio:", err)
			logLine("ERROR " + bundle + ": " + err.Error())
			os.Exit(1)
		}
	}
	var clean []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BEEBURST_") {
			clean = append(clean, kv)
		}
	}
	args := append([]string{runc}, os.Args[1:]...)
	if err := syscall.Exec(runc, args, clean); err != nil {
		fmt.Fprintln(os.Stderr, "runc-blkio: exec", runc, err)
		os.Exit(127)
	}
}

func env(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// createBundle finds `create` among runc's arguments and returns its bundle directory.
func createBundle(args []string) (string, bool) {
	// runc's global flags that take a value.
	valued := map[string]bool{"--root": true, "--log": true, "--log-format": true, "--criu": true, "--rootless": true}
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			break
		}
		if valued[a] {
			i++
		}
	}
	if i >= len(args) || args[i] != "create" {
		return "", false
	}
	bundle := "."
	for j := i + 1; j < len(args); j++ {
		a := args[j]
		switch {
		case a == "--bundle" || a == "-b":
			if j+1 < len(args) {
				bundle = args[j+1]
			}
		case strings.HasPrefix(a, "--bundle="):
			bundle = strings.TrimPrefix(a, "--bundle=")
		}
	}
	return bundle, true
}

func patch(bundle string) error {
	dev := os.Getenv("BEEBURST_BLKIO_DEV")
	wbps, _ := strconv.ParseUint(os.Getenv("BEEBURST_BLKIO_WBPS"), 10, 64)
	rbps, _ := strconv.ParseUint(os.Getenv("BEEBURST_BLKIO_RBPS"), 10, 64)
	if dev == "" || (wbps == 0 && rbps == 0) {
		return nil
	}
	var major, minor int64
	if _, err := fmt.Sscanf(dev, "%d:%d", &major, &minor); err != nil {
		return fmt.Errorf("BEEBURST_BLKIO_DEV %q: %w", dev, err)
	}
	path := filepath.Join(bundle, "config.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var spec map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // keep 64-bit limits exact
	if err := dec.Decode(&spec); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	linux := child(spec, "linux")
	res := child(linux, "resources")
	bio := child(res, "blockIO")
	throttle := func(key string, rate uint64) {
		if rate == 0 {
			return
		}
		var list []any
		if old, ok := bio[key].([]any); ok {
			for _, e := range old { // replace an entry for the same device, keep the others
				if m, ok := e.(map[string]any); ok && fmt.Sprint(m["major"]) == fmt.Sprint(major) && fmt.Sprint(m["minor"]) == fmt.Sprint(minor) {
					continue
				}
				list = append(list, e)
			}
		}
		bio[key] = append(list, map[string]any{"major": major, "minor": minor, "rate": rate})
	}
	throttle("throttleWriteBpsDevice", wbps)
	throttle("throttleReadBpsDevice", rbps)
	out, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	tmp := path + ".beeburst"
	if err := os.WriteFile(tmp, out, fi.Mode().Perm()); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	logLine(fmt.Sprintf("throttled %s dev=%d:%d wbps=%d rbps=%d", filepath.Base(bundle), major, minor, wbps, rbps))
	return nil
}

func child(m map[string]any, k string) map[string]any {
	if c, ok := m[k].(map[string]any); ok {
		return c
	}
	c := map[string]any{}
	m[k] = c
	return c
}

func logLine(s string) {
	p := os.Getenv("BEEBURST_BLKIO_LOG")
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
