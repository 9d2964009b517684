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

	"github.com/beeburst/beeburst/internal/bench"
)

// ModuleMissingPrefix starts the message of a failed check-module run whose module is absent, so
// that the operator can tell "not there" from "could not look" (a broken node, a bad image).
const ModuleMissingPrefix = "kernel module missing:"

var moduleName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// newCheckModule checks that a kernel module is loaded on the node the pod runs on. Inside a
// container /proc/modules and /sys/module show the host kernel (there is one kernel), so the
// check needs no privileges and no host mounts.
func newCheckModule(g *globals, stdout io.Writer) *cobra.Command {
	var name, procRoot, sysRoot string
	c := &cobra.Command{
		Use:   "check-module --name NAME",
		Short: "check that a kernel module (e.g. beegfs) is loaded on this node",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return runReport(g, stdout, "check-module", func(context.Context, *bench.Report) error {
				if !moduleName.MatchString(name) {
					return fmt.Errorf("check-module: %q is not a kernel module name", name)
				}
				return checkModule(name, procRoot, sysRoot)
			})
		},
	}
	c.Flags().StringVar(&name, "name", "beegfs", "the kernel module")
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
