package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/beeburst/beeburst/internal/agentapi"
	"github.com/beeburst/beeburst/internal/bench"
)

// newDir makes and removes a burst buffer's node-local directory (the local engine's
// provisioning and teardown, run by the operator as one-shot pods on each node).
func newDir(g *globals, stdout io.Writer) *cobra.Command {
	c := &cobra.Command{
		Use:   agentapi.CmdDir + " create|remove --path DIR",
		Short: "make or remove a burst buffer's node-local directory",
	}
	var path string
	create := &cobra.Command{
		Use:   agentapi.CmdDirCreate + " --path DIR",
		Short: "make DIR (and its parents) writable by the job's processes, whatever their uid",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return runReport(g, stdout, agentapi.CmdDir+"-"+agentapi.CmdDirCreate, func(_ context.Context, r *bench.Report) error {
				if err := checkDataDir(path); err != nil {
					return err
				}
				if err := os.MkdirAll(path, 0o755); err != nil {
					return err
				}
				// Sticky and world-writable like /tmp: the job's pods may run as any uid, and
				// only pods that mount this node path can reach it.
				if err := os.Chmod(path, os.ModeSticky|0o777); err != nil {
					return err
				}
				// The space free for this burst buffer now: figures reused from another
				// burst buffer's device probe say what was free then.
				if free, err := freeBytes(path); err == nil {
					r.FreeBytes = new(int64(free))
				}
				return nil
			})
		},
	}
	remove := &cobra.Command{
		Use:   agentapi.CmdDirRemove + " --path DIR",
		Short: "remove DIR and everything in it, and its chain markers (" + agentapi.ChainDirOf("DIR") + ")",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return runReport(g, stdout, agentapi.CmdDir+"-"+agentapi.CmdDirRemove, func(context.Context, *bench.Report) error {
				if err := checkDataDir(path); err != nil {
					return err
				}
				if err := os.RemoveAll(path); err != nil {
					return err
				}
				return os.RemoveAll(agentapi.ChainDirOf(path))
			})
		},
	}
	for _, sub := range []*cobra.Command{create, remove} {
		sub.Flags().StringVar(&path, agentapi.FlagPath, "", "the burst buffer's directory (must lie below a directory named beeburst)")
		_ = sub.MarkFlagRequired(agentapi.FlagPath)
		c.AddCommand(sub)
	}
	return c
}

// checkDataDir refuses paths that are not a burst buffer's own directory, so that a wrong
// argument can never remove a node's data: the path must be absolute, clean, and lie directly
// below a directory named "beeburst".
func checkDataDir(p string) error {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p {
		return fmt.Errorf("dir: %q is not a clean absolute path", p)
	}
	if filepath.Base(filepath.Dir(p)) != "beeburst" || strings.HasPrefix(filepath.Base(p), ".") {
		return fmt.Errorf("dir: %q is not a burst buffer directory (<storage path>/beeburst/<namespace>.<name>)", p)
	}
	return nil
}
