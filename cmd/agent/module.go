package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/beeburst/beeburst/internal/agentapi"
	"github.com/beeburst/beeburst/internal/bench"
)

// ModuleMissingPrefix starts the message of a failed check-module run whose module is absent, so
// that the operator can tell "not there" from "could not look" (a broken node, a bad image).
const ModuleMissingPrefix = "kernel module missing:"

// MachineUUIDMissingPrefix starts the message of a failed check-module --machine-uuid run whose
// node has no machine UUID.
const MachineUUIDMissingPrefix = "machine uuid missing:"

var moduleName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// newCheckModule checks that a kernel module is loaded on the node the pod runs on. Inside a
// container /proc/modules and /sys/module show the host kernel (there is one kernel), so the
// check needs no privileges and no host mounts; --free-path reads the free space of a
// directory the pod mounts.
func newCheckModule(g *globals, stdout io.Writer) *cobra.Command {
	var name, procRoot, sysRoot, freePath string
	var machineUUID bool
	c := &cobra.Command{
		Use:   agentapi.CmdCheckModule + " --name NAME [--machine-uuid]",
		Short: "check that a kernel module (e.g. beegfs) is loaded on this node (and that it has a machine UUID)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return runReport(g, stdout, agentapi.CmdCheckModule, func(_ context.Context, r *bench.Report) error {
				if !moduleName.MatchString(name) {
					return fmt.Errorf("check-module: %q is not a kernel module name", name)
				}
				if err := checkModule(name, procRoot, sysRoot); err != nil {
					return err
				}
				r.Message = fmt.Sprintf("the %s kernel module is loaded%s", name, moduleVersion(name, sysRoot))
				if machineUUID {
					id, err := checkMachineUUID(sysRoot)
					if err != nil {
						return err
					}
					r.Message += "; machine uuid " + id
				}
				if freePath != "" {
					// The space free for this burst buffer before its services write: figures
					// reused from another burst buffer's device probe say what was free then.
					// Unknown when it cannot be read: the module's answer stands.
					if free, err := freeBytes(freePath); err == nil {
						r.FreeBytes = new(int64(free))
					} else {
						logf("free space of %s: %v", freePath, err)
					}
				}
				return nil
			})
		},
	}
	c.Flags().StringVar(&name, agentapi.FlagName, "beegfs", "the kernel module")
	c.Flags().BoolVar(&machineUUID, agentapi.FlagMachineUUID, false, "also require a machine UUID (DMI product_uuid), which BeeGFS servers register with")
	c.Flags().StringVar(&freePath, agentapi.FlagFreePath, "", "also report the space free in this directory's file system")
	c.Flags().StringVar(&procRoot, "proc-root", "/proc", "where /proc is (tests)")
	c.Flags().StringVar(&sysRoot, "sys-root", "/sys", "where /sys is (tests)")
	return c
}

// checkModule looks in /sys/module/NAME (loaded modules and built-ins) and /proc/modules
// (loaded modules). A module that is installed but not loaded counts as missing: the BeeGFS
// client cannot mount until someone runs modprobe, and the operator does not load kernel code.
func checkModule(name, procRoot, sysRoot string) error {
	if st, err := os.Stat(filepath.Join(sysRoot, "module", name)); err == nil && st.IsDir() {
		return nil
	}
	f, err := os.Open(filepath.Join(procRoot, "modules"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("check-module: cannot read the loaded modules: %w", err)
	}
	if err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if fields := strings.Fields(sc.Text()); len(fields) > 0 && fields[0] == name {
				return nil
			}
		}
	}
	return fmt.Errorf("%s the %s kernel module is not loaded on node %s (checked /sys/module/%s and /proc/modules); install the BeeGFS 8 client (beegfs-client package or DKMS) and run modprobe %s",
		ModuleMissingPrefix, name, nodeName(), name, name)
}

// moduleVersion is " (version V)" when the module publishes one in sysfs, else "".
func moduleVersion(name, sysRoot string) string {
	b, err := os.ReadFile(filepath.Join(sysRoot, "module", name, "version"))
	if v := strings.TrimSpace(string(b)); err == nil && v != "" {
		return " (version " + v + ")"
	}
	return ""
}

// checkMachineUUID reads the machine UUID the way BeeGFS 8 servers do first
// (ThinkParQ/beegfs common/source/common/system/UUID.h, getMachineUUID): the DMI product_uuid,
// 36 characters. Their fallback, the UUID of a partition from the blkid cache, sees no host
// block devices inside a container, so without DMI a service pod cannot register
// ("Couldn't determine UUID for machine. Node registration not possible.") and would retry
// forever; this check lets the operator say so before anything starts.
func checkMachineUUID(sysRoot string) (string, error) {
	p := filepath.Join(sysRoot, "class", "dmi", "id", "product_uuid")
	b, err := os.ReadFile(p)
	id := strings.TrimSpace(string(b))
	if err == nil && len(id) == 36 {
		return id, nil
	}
	why := "it is empty or not a UUID"
	if err != nil {
		why = err.Error()
	}
	return "", fmt.Errorf("%s node %s has no machine UUID (%s: %s); BeeGFS 8 metadata and storage servers register with it and refuse to start without one. Real servers and cloud VMs have it (virtual machines: give the guest an SMBIOS UUID, e.g. QEMU -uuid); choose other nodes or use spec.engine: local",
		MachineUUIDMissingPrefix, nodeName(), p, why)
}
