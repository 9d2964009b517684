// Command scale is `make bench-scale`: the operator's control plane at scale. For each size it
// starts envtest's kube-apiserver and etcd, registers the nodes, runs the simulated kubelet
// (test/scale/kubelet) and the manager (bin/manager, in its own process), creates burst
// buffers at a steady rate, deletes some of them mid-way, waits until the rest are Ready,
// idles, deletes them all, and reports the manager's memory, CPU, reconciles, API requests
// and watch events per burst buffer, and the objects each leaves in the API. The report is
// printed and written to docs/bench/scale-<date>-<host>.txt.
//
// It is a program, not a test: `go test ./...` does not run it, and it asserts nothing about
// time (a benchmark that fails on a slow machine measures the machine).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

var logger logr.Logger

func main() {
	var (
		o        options
		sizes    string
		outDir   string
		seed     int64
		label    string
		progress = func(format string, args ...any) {
			fmt.Fprintf(os.Stderr, "%s bench-scale: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
		}
	)
	flag.StringVar(&sizes, "sizes", "50x250,200x1000", "runs, each BURSTBUFFERSxNODES, in order")
	flag.StringVar(&o.kubeBin, "kube-bin", os.Getenv("KUBEBUILDER_ASSETS"), "directory of kube-apiserver and etcd (make envtest)")
	flag.StringVar(&o.manager, "manager", "bin/manager", "the manager binary (make build)")
	flag.StringVar(&o.root, "root", ".", "the repository (config/crd, config/rbac)")
	flag.Float64Var(&o.rate, "rate", 10, "burst buffers created (and, at the end, deleted) per second")
	flag.IntVar(&o.minNodes, "min-nodes", 2, "fewest nodes of a burst buffer")
	flag.IntVar(&o.maxNodes, "max-nodes", 32, "most nodes of a burst buffer")
	flag.Float64Var(&o.deleteShare, "delete-share", 0.1, "share of burst buffers deleted 2-12 s after creation")
	flag.DurationVar(&o.idle, "idle", 30*time.Second, "how long all stay Ready before the teardown")
	flag.DurationVar(&o.timeout, "timeout", 30*time.Minute, "bound of each size's wait for all Ready, and of its wait for all gone")
	flag.Int64Var(&seed, "seed", 1, "seed of the sizes, node choices and deletions")
	flag.Float64Var(&o.speed, "speed", 1, "the simulated kubelet's clock: runs take 1/speed of their time")
	flag.StringVar(&outDir, "out", "docs/bench", "directory of the report file ('' for none)")
	flag.StringVar(&label, "label", "", "what the run compares, e.g. the manager's version: in the report's header and its file name")
	flag.BoolVar(&o.keep, "keep", false, "keep each run's directory (audit log, manager log)")
	validation := flag.String("validation", string(v1alpha1.ProfileQuick), "the burst buffers' validation profile: quick, standard, or none (stage 1 only: the prepare pods alone)")
	flag.StringVar(&o.profileDir, "profile", "", "directory for the CPU profiles of the manager and of kube-apiserver (the arrivals and a minute after) and the manager's heap profile (at all Ready)")
	flag.Parse()
	o.seed = uint64(seed)
	switch o.validation = v1alpha1.ValidationProfile(*validation); o.validation {
	case v1alpha1.ProfileNone, v1alpha1.ProfileQuick, v1alpha1.ProfileStandard:
	default:
		fmt.Fprintf(os.Stderr, "bench-scale: -validation: %q is not none, quick or standard\n", *validation)
		os.Exit(2)
	}
	logger = funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{})
	ctrllog.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())

	var runs []size
	for _, s := range strings.Split(sizes, ",") {
		b, nd, ok := strings.Cut(strings.TrimSpace(s), "x")
		bbs, err1 := strconv.Atoi(b)
		nodes, err2 := strconv.Atoi(nd)
		if !ok || err1 != nil || err2 != nil || bbs < 1 || nodes < 2 {
			fmt.Fprintf(os.Stderr, "bench-scale: -sizes: %q is not BURSTBUFFERSxNODES\n", s)
			os.Exit(2)
		}
		runs = append(runs, size{bbs, nodes})
	}
	if o.kubeBin == "" {
		fmt.Fprintln(os.Stderr, "bench-scale: -kube-bin or KUBEBUILDER_ASSETS must name the directory of kube-apiserver and etcd (make envtest)")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	host, _ := os.Hostname()
	started := time.Now()
	var results []*result
	for _, sz := range runs {
		r, err := runSize(ctx, o, sz, progress)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench-scale: %s: %v\n", sz, err)
			os.Exit(1)
		}
		results = append(results, r)
	}
	report := header(o, host, started)
	if label != "" {
		report += "label: " + label + "\n"
	}
	report += "\n" + table(results) + goals(results)
	fmt.Print(report)
	if outDir != "" {
		base := fmt.Sprintf("scale-%s-%s", started.UTC().Format("2006-01-02"), host)
		if label != "" {
			base += "-" + strings.Trim(strings.Map(func(r rune) rune {
				if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
					return r
				}
				return '-'
			}, strings.ToLower(strings.Fields(label)[0])), "-")
		}
		name := filepath.Join(outDir, base+".txt")
		err := os.MkdirAll(outDir, 0o755)
		if err == nil {
			err = os.WriteFile(name, []byte(report), 0o644)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench-scale: writing %s: %v\n", name, err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "bench-scale: report written to %s\n", name)
	}
}
