package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/beeburst/beeburst/internal/agentapi"
	"github.com/beeburst/beeburst/internal/bench"
)

func newIdeal(g *globals, stdout io.Writer) *cobra.Command {
	f := &dataFlags{}
	var clients []string
	var noRead bool
	c := &cobra.Command{
		Use:   agentapi.CmdIdeal + " --dir DIR --procs N [--clients host1,host2:port]",
		Short: "stage 3: the ideal workload - N processes per node write (then read back) large blocks to their own new files in one directory",
		Long: `One point of the stage-3 sweep. Locally: N fio jobs in a new subdirectory of --dir. With
--clients (fio servers started by 'agent fio-server' on M nodes): fio client mode; all servers
start together, --dir is the path on the servers (the burst buffer's mount), fio prefixes the
files with each client's address, and the aggregate is fio's "All clients" entry (total bytes /
slowest runtime). The read-back reads what was written and unlinks the files. --size auto is
only for local runs; give --size with --clients.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return runReport(g, stdout, agentapi.CmdIdeal, func(ctx context.Context, r *bench.Report) error {
				r.Tool = bench.ToolFio
				res, err := ideal(ctx, f, clients, !noRead)
				r.Results = res
				return err
			})
		},
	}
	f.add(c, agentapi.FlagProcs, 1, 5*time.Second)
	c.Flags().StringSliceVar(&clients, "clients", nil, "fio servers (host or host:port), comma-separated: fio client mode over M nodes")
	c.Flags().BoolVar(&noRead, "no-read", false, "write only; leave no read-back (files are still removed)")
	return c
}

func ideal(ctx context.Context, f *dataFlags, clients []string, read bool) ([]bench.Result, error) {
	label := fmt.Sprintf("ideal M=%d N=%d", max(1, len(clients)), f.procs)
	if len(clients) == 0 {
		wd, cleanup, err := workDir(f.dir, "ideal")
		if err != nil {
			return nil, err
		}
		defer cleanup()
		o, err := f.options("ideal", wd)
		if err != nil {
			return nil, err
		}
		res, err := writeThenRead(ctx, wd, o, nil, read)
		for i := range res {
			res[i].Nodes, res[i].Label = 1, label
		}
		return res, err
	}
	if f.size == "auto" {
		return nil, fmt.Errorf("--size auto needs the directory on this node; give --size with --clients")
	}
	jobDir, err := os.MkdirTemp("", "beeburst-fio-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(jobDir)
	o, err := f.options("ideal", strings.TrimRight(f.dir, "/"))
	if err != nil {
		return nil, err
	}
	if !read {
		o.Unlink = true
	}
	res, err := writeThenRead(ctx, jobDir, o, clients, read)
	for i := range res {
		res[i].Label = label
	}
	return res, err
}
