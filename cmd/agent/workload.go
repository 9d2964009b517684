package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/beeburst/beeburst/internal/agentapi"
	"github.com/beeburst/beeburst/internal/bench"
)

// Workload kinds (agentapi.Kind*).
const (
	kindSharedFile = agentapi.KindSharedFile
	kindRandom4k   = agentapi.KindRandom4k
	kindMetadata   = agentapi.KindMetadata
)

func newWorkload(g *globals, stdout io.Writer) *cobra.Command {
	f := &dataFlags{}
	var kind, tool string
	var files, iodepth int
	c := &cobra.Command{
		Use:   agentapi.CmdWorkload + " --kind sharedfile|random4k|metadata --dir DIR [--tool fio|ior|mdtest]",
		Short: "software factors after stage 3: shared-file N-1, random 4 KiB IOPS, metadata create/stat/delete",
		Long: `sharedfile: --procs processes write then read one shared file, each its own region (fio
offset_increment, or IOR without -F, stonewalled with wear-out).
random4k: 4 KiB random writes then reads over files fio lays out first (fio libaio with
--iodepth, or IOR -z).
metadata: --files files per process created, stat'ed, deleted (fio filecreate/filestat/
filedelete, or mdtest -F -u).
IOR and mdtest run under mpirun -np --procs when mpirun exists (IO500's tools, for
comparability); 'agent tools' says which tools this image has.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return runReport(g, stdout, agentapi.CmdWorkload+" "+kind, func(ctx context.Context, r *bench.Report) error {
				wd, cleanup, err := workDir(f.dir, kind)
				if err != nil {
					return err
				}
				defer cleanup()
				r.Tool = tool
				switch {
				case tool == bench.ToolFio && (kind == kindSharedFile || kind == kindRandom4k):
					r.Results, err = fioDataWorkload(ctx, f, kind, wd, iodepth)
				case tool == bench.ToolFio && kind == kindMetadata:
					r.Results, err = fioMetadata(ctx, wd, f.procs, files)
				case tool == bench.ToolIOR && (kind == kindSharedFile || kind == kindRandom4k):
					r.Results, err = iorWorkload(ctx, f, kind, wd)
				case tool == bench.ToolMdtest && kind == kindMetadata:
					r.Results, err = mdtestWorkload(ctx, wd, f.procs, files)
				default:
					return fmt.Errorf("--kind %q with --tool %q is not a workload (sharedfile and random4k: fio or ior; metadata: fio or mdtest)", kind, tool)
				}
				for i := range r.Results {
					r.Results[i].Label = kind
				}
				return err
			})
		},
	}
	f.add(c, agentapi.FlagProcs, 4, 5*time.Second)
	c.Flags().StringVar(&kind, agentapi.FlagKind, "", "sharedfile, random4k or metadata")
	c.Flags().StringVar(&tool, "tool", "fio", "fio, ior (sharedfile, random4k) or mdtest (metadata)")
	c.Flags().IntVar(&files, "files", 1000, "metadata: files per process")
	c.Flags().IntVar(&iodepth, "iodepth", 16, "random4k with fio: queue depth per process (libaio)")
	_ = c.MarkFlagRequired(agentapi.FlagKind)
	return c
}

func fioDataWorkload(ctx context.Context, f *dataFlags, kind, wd string, iodepth int) ([]bench.Result, error) {
	if kind == kindSharedFile {
		o, err := f.options("shared", wd)
		if err != nil {
			return nil, err
		}
		o.SharedFile = true
		return writeThenRead(ctx, wd, o, nil, true)
	}
	f4 := *f
	f4.bs = "4k"
	o, err := f4.options("rand4k", wd)
	if err != nil {
		return nil, err
	}
	if o.Size > 256<<20 {
		o.Size = 256 << 20 // laid out before the timed phase: keep it short
	}
	o.IODepth = iodepth
	// randread first: fio lays its files out (writes them fully) before the timed phase, so
	// neither run reads holes; randwrite then overwrites the same files.
	var out []bench.Result
	for _, op := range []bench.Operation{bench.OpRandRead, bench.OpRandWrite} {
		plan, err := bench.DataPlan(op, o)
		if err != nil {
			return out, err
		}
		p, err := runFio(ctx, wd, plan, nil)
		if err != nil {
			return out, err
		}
		if r := bench.Find(p.Results, op); r != nil {
			out = append(out, *r)
		}
	}
	// randwrite first in the report, as in the other workloads.
	if len(out) == 2 {
		out[0], out[1] = out[1], out[0]
	}
	return out, nil
}

func fioMetadata(ctx context.Context, wd string, procs, files int) ([]bench.Result, error) {
	plans, err := bench.MetadataPlans(wd, procs, files)
	if err != nil {
		return nil, err
	}
	var out []bench.Result
	for _, plan := range plans {
		p, err := runFio(ctx, wd, plan, nil)
		if err != nil {
			return out, err
		}
		if r := bench.Find(p.Results, plan.Op); r != nil {
			out = append(out, *r)
		} else {
			return out, fmt.Errorf("fio: the %s run reported no %s result", plan.Op, plan.Op)
		}
	}
	return out, nil
}

// mpiCommand runs an MPI tool with procs tasks: under mpirun when it exists (as root too,
// inside containers), directly for one task otherwise.
func mpiCommand(procs int, tool string, args ...string) (string, []string, error) {
	if _, err := exec.LookPath(tool); err != nil {
		return "", nil, fmt.Errorf("%s is not installed in this image (see 'agent tools'); use --tool fio", tool)
	}
	if mpirun, err := exec.LookPath("mpirun"); err == nil {
		return mpirun, append([]string{"--allow-run-as-root", "--oversubscribe", "-np", strconv.Itoa(procs), tool}, args...), nil
	}
	if procs != 1 {
		return "", nil, fmt.Errorf("mpirun is not installed: %s can run only 1 process", tool)
	}
	return tool, args, nil
}

func iorWorkload(ctx context.Context, f *dataFlags, kind, wd string) ([]bench.Result, error) {
	o, err := f.options("ior", wd)
	if err != nil {
		return nil, err
	}
	iopt := bench.IOROptions{Dir: wd, SharedFile: kind == kindSharedFile, Transfer: o.BlockSize, Block: o.Size,
		Stonewall: f.runtime, JSONFile: filepath.Join(wd, "ior-summary.json")}
	if kind == kindRandom4k {
		iopt.Random, iopt.Transfer, iopt.SharedFile = true, 4096, false
		iopt.Block = min(o.Size, 256<<20) / 4096 * 4096
	}
	name, args, err := mpiCommand(f.procs, "ior", bench.IORArgs(iopt)...)
	if err != nil {
		return nil, err
	}
	if _, err := runTool(ctx, name, args...); err != nil {
		return nil, err
	}
	out, err := os.ReadFile(iopt.JSONFile)
	if err != nil {
		return nil, fmt.Errorf("ior: no JSON summary: %v", err)
	}
	p, err := bench.ParseIOR(out)
	if err != nil {
		return nil, err
	}
	return p.Results, nil
}

func mdtestWorkload(ctx context.Context, wd string, procs, files int) ([]bench.Result, error) {
	name, args, err := mpiCommand(procs, "mdtest", bench.MdtestArgs(filepath.Join(wd, "mdtest"), files)...)
	if err != nil {
		return nil, err
	}
	out, err := runTool(ctx, name, args...)
	if err != nil {
		return nil, err
	}
	p, err := bench.ParseMdtest(out)
	if err != nil {
		return nil, err
	}
	return p.Results, nil
}
