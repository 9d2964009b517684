package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/beeburst/beeburst/internal/agentapi"
	"github.com/beeburst/beeburst/internal/bench"
)

// Free space is shared with other users of the drive: auto-sized files use at most this share of
// what is free, and at most autoCap per process.
const (
	autoFraction = 0.10
	autoCap      = 1 << 30
)

type dataFlags struct {
	dir     string
	size    string
	procs   int
	bs      string
	runtime time.Duration
	direct  bool
}

func (f *dataFlags) add(c *cobra.Command, procsName string, procsDefault int, runtime time.Duration) {
	fl := c.Flags()
	fl.StringVar(&f.dir, agentapi.FlagDir, "", "directory to test (node-local path or the burst buffer's mount); files go to a new subdirectory, removed afterwards")
	fl.StringVar(&f.size, "size", "auto", "file size per process, e.g. 256M; auto: min(1GiB, 10% of free space / processes)")
	fl.IntVar(&f.procs, procsName, procsDefault, "processes (fio jobs)")
	fl.StringVar(&f.bs, agentapi.FlagBlockSize, "1M", "block size of each I/O call")
	fl.DurationVar(&f.runtime, agentapi.FlagRuntime, runtime, "runtime of each phase (write, read); whole seconds")
	fl.BoolVar(&f.direct, "direct", true, "direct I/O (O_DIRECT), bypassing the page cache")
	_ = c.MarkFlagRequired(agentapi.FlagDir)
}

// options resolves the flags into fio options for files in wd (sized from dir's free space).
func (f *dataFlags) options(name, wd string) (bench.SeqOptions, error) {
	bs, err := bench.ParseSize(f.bs)
	if err != nil {
		return bench.SeqOptions{}, fmt.Errorf("--bs: %v", err)
	}
	var size int64
	if f.size == "auto" {
		free, err := freeBytes(wd)
		if err != nil {
			return bench.SeqOptions{}, err
		}
		if size, err = bench.DeviceSize(free, f.procs, bs, autoCap, autoFraction); err != nil {
			return bench.SeqOptions{}, err
		}
	} else if size, err = bench.ParseSize(f.size); err != nil {
		return bench.SeqOptions{}, fmt.Errorf("--size: %v", err)
	}
	return bench.SeqOptions{Name: name, Dir: wd, Procs: f.procs, BlockSize: bs, Size: size, Runtime: f.runtime, Direct: f.direct}, nil
}

// ended stamps res (nil: none) with the moment its tool returned.
func ended(res *bench.Result) *bench.Result {
	if res != nil {
		res.End = time.Now().UTC().Truncate(time.Millisecond)
	}
	return res
}

// writeThenRead writes o.Procs new files for o.Runtime, then reads back what was written.
// clients: fio client mode (files on the servers; the read-back unlinks them). A local run
// starts on a settled file system and records what the device under it moved in each phase
// (Result.DeviceBytes), so that the operator can tell a run that had the device to itself.
// Each result says when its phase ended (Result.End).
func writeThenRead(ctx context.Context, jobDir string, o bench.SeqOptions, clients []string, read bool) ([]bench.Result, error) {
	var meter *deviceMeter
	if len(clients) == 0 {
		settle(o.Dir)
		meter = newDeviceMeter(o.Dir)
	}
	wplan, err := bench.DataPlan(bench.OpWrite, o)
	if err != nil {
		return nil, err
	}
	wr, err := meter.metered(func() (*bench.Result, error) {
		w, err := runFio(ctx, jobDir, wplan, clients)
		if err != nil {
			return nil, err
		}
		return ended(bench.Find(w.Results, bench.OpWrite)), nil
	})
	if err != nil {
		return nil, err
	}
	if wr == nil {
		return nil, fmt.Errorf("fio: the write run reported no write result")
	}
	results := []bench.Result{*wr}
	if !read {
		return results, nil
	}
	ro := o
	if ro.Size, err = bench.ReadBackSize(*wr, o.Size, o.BlockSize); err != nil {
		return results, err
	}
	ro.Unlink = true
	rplan, err := bench.DataPlan(bench.OpRead, ro)
	if err != nil {
		return results, err
	}
	rr, err := meter.metered(func() (*bench.Result, error) {
		rp, err := runFio(ctx, jobDir, rplan, clients)
		if err != nil {
			return nil, err
		}
		return ended(bench.Find(rp.Results, bench.OpRead)), nil
	})
	if err != nil {
		return results, err
	}
	if rr == nil {
		return results, fmt.Errorf("fio: the read run reported no read result")
	}
	return append(results, *rr), nil
}

func newProbeDevice(g *globals, stdout io.Writer) *cobra.Command {
	f := &dataFlags{}
	var sys, linkAddress string
	c := &cobra.Command{
		Use:   agentapi.CmdProbeDevice + " --dir DIR",
		Short: "stage 2: fio on a node-local path (direct I/O, large sequential blocks, several jobs; write then read)",
		Long: `Writes --jobs new files in a new subdirectory of --dir with large sequential blocks and
direct I/O for --runtime, then reads back what was written for --runtime. Files are sized from
the free space (--size auto: min(1 GiB, 10% of free / jobs) per job) and removed afterwards,
also when the run fails or is cancelled.

Before that it reads from sysfs (--sys) what the node's documentation would say: the block
device below --dir with its model and the file system's size, and with --link-address the
speed of the interface that carries that address (in a pod this needs the host network).
The Report's "hardware" holds them; what cannot be read or trusted is left out with a note.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return runReport(g, stdout, agentapi.CmdProbeDevice, func(ctx context.Context, r *bench.Report) error {
				r.Tool = bench.ToolFio
				if free, err := freeBytes(f.dir); err == nil {
					r.FreeBytes = new(int64(free))
				}
				r.Hardware = discoverHardware(sys, f.dir, linkAddress, hostInterfaces)
				wd, cleanup, err := workDir(f.dir, "probe")
				if err != nil {
					return err
				}
				defer cleanup()
				o, err := f.options("probe", wd)
				if err != nil {
					return err
				}
				res, err := writeThenRead(ctx, wd, o, nil, true)
				for i := range res {
					res[i].Label = "device"
				}
				r.Results = res
				return err
			})
		},
	}
	f.add(c, agentapi.FlagJobs, 4, 10*time.Second)
	c.Flags().StringVar(&sys, "sys", "/sys", "where sysfs is mounted (hardware discovery)")
	c.Flags().StringVar(&linkAddress, agentapi.FlagLinkAddress, "", "the node's address (its InternalIP): report the speed of the interface that carries it")
	return c
}
