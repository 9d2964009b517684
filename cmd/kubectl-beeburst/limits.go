package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/apibridge"
	"github.com/beeburst/beeburst/internal/limits"
)

// sweepConfigMapKey is the key of the full sweep in the ConfigMap that
// status.limits.sweep.configMapName names: CSV with limits.SweepCSVHeader, written by the
// controller (controllers/sweep.go, saveSweep).
const sweepConfigMapKey = "sweep.csv"

// requestTimeout bounds the plugin's calls to the API server when --request-timeout is 0.
const requestTimeout = 30 * time.Second

// newClientFunc makes the client of the limits command; tests replace it with a fake.
type newClientFunc func(*genericclioptions.ConfigFlags) (client.Reader, error)

func newClient(cf *genericclioptions.ConfigFlags) (client.Reader, error) {
	cfg, err := cf.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme})
}

type limitsOptions struct {
	config    *genericclioptions.ConfigFlags
	output    *outputFlags
	plot      string
	newClient newClientFunc
}

// newLimitsCommand prints a live burst buffer's limits, stage beside stage, with the same
// table as `estimate`; the kubeconfig flags are kubectl's own (cli-runtime's ConfigFlags).
func newLimitsCommand(newClient newClientFunc) *cobra.Command {
	o := &limitsOptions{config: genericclioptions.NewConfigFlags(true), output: newOutputFlags(), newClient: newClient}
	c := &cobra.Command{
		Use:   "limits NAME [-n NAMESPACE] [-o wide|json|yaml|...] [--plot FILE.png|svg]",
		Short: "print a burst buffer's published limits: stage 1 (estimated) to stage 4 (monitoring)",
		Long: `limits prints a burst buffer's limits from its status, one column per stage: stage 1
estimated from documented figures, stage 2 recomputed from the measured components, stage 3
the ideal-workload sweep (best B, efficiency, plateau), then stage 4's per-node figures and
the warnings. The sweep's points come from the ConfigMap the status names
(status.limits.sweep.configMapName); -o wide adds them as a grid, --plot draws them.

Exit codes: 0 success, 2 invalid input, 1 other failures (the cluster, the burst buffer).`,
		Example: `  kubectl beeburst limits scratch
  kubectl beeburst limits scratch -n jobs -o yaml
  kubectl beeburst limits scratch --plot scratch-sweep.png`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, args[0])
		},
		ValidArgsFunction: o.completeName,
	}
	o.config.AddFlags(c.Flags())
	o.output.addFlags(c)
	c.Flags().StringVar(&o.plot, "plot", "", plotUsage)
	return c
}

// completeName offers the names of the burst buffers in the namespace (shell completion of
// NAME); nothing when the cluster does not answer within a few seconds.
func (o *limitsOptions) completeName(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	namespace, _, err := o.config.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	k, err := o.newClient(o.config)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), 5*time.Second)
	defer cancel()
	var list v1alpha1.BurstBufferList
	if err := k.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var names []string
	for _, bb := range list.Items {
		if strings.HasPrefix(bb.Name, toComplete) {
			names = append(names, bb.Name)
		}
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

func (o *limitsOptions) run(cmd *cobra.Command, name string) error {
	if err := o.output.validate(); err != nil {
		return err
	}
	if err := checkPlotFile(o.plot); err != nil {
		return err
	}
	namespace, _, err := o.config.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return runtimeError{fmt.Errorf("kubeconfig: %w", err)}
	}
	k, err := o.newClient(o.config)
	if err != nil {
		return runtimeError{fmt.Errorf("kubeconfig: %w", err)}
	}
	timeout := requestTimeout
	if o.config.Timeout != nil {
		if d, err := time.ParseDuration(*o.config.Timeout); err == nil && d > 0 {
			timeout = d
		}
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
	defer cancel()
	var bb v1alpha1.BurstBuffer
	if err := k.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &bb); err != nil {
		var status apierrors.APIStatus
		switch {
		case apierrors.IsNotFound(err):
			return runtimeError{fmt.Errorf("%w in namespace %s", err, namespace)}
		case !errors.As(err, &status):
			// No answer from an API server: say which one, as kubectl does.
			host := "the kubeconfig's server"
			if cfg, cerr := o.config.ToRESTConfig(); cerr == nil {
				host = cfg.Host
			}
			return runtimeError{fmt.Errorf("cannot reach the cluster at %s (KUBECONFIG, --kubeconfig, --context): %w", host, err)}
		}
		return runtimeError{err}
	}
	rep := apibridge.ReportFromStatus(&bb)

	// The sweep's points: the grid of -o wide, the plot, and the plateau's figure, which the
	// status does not carry.
	points, source, perr := sweepPoints(ctx, k, &bb)
	if perr == nil && rep.Sweep != nil {
		fillPlateau(rep.Sweep, points)
	}
	if perr != nil && !errors.Is(perr, errNoSweep) && o.output.table() {
		rep.Summary = append(rep.Summary, fmt.Sprintf("sweep points: %v", perr))
	}
	if o.plot != "" {
		if perr != nil {
			return runtimeError{fmt.Errorf("--plot: %w", perr)}
		}
		var notes []string
		if s := bb.Status.Limits.Sweep; s != nil && s.CutShort {
			notes = append(notes, "stage 3 was cut short by the time budget (spec.validation.timeBudget): not every point was measured")
		}
		notes = append(notes, "points: ConfigMap "+source+fmt.Sprintf("; phase %s", orDash(string(bb.Status.Phase))))
		if err := writePlot(o.plot, fmt.Sprintf("BurstBuffer %s/%s: the stage-3 sweep", bb.Namespace, bb.Name), notes,
			rep, points, cmd.ErrOrStderr()); err != nil {
			return err
		}
	}
	out := cmd.OutOrStdout()
	if !o.output.table() {
		return o.output.printDocument(out, rep.Document(bb.Name))
	}
	return o.output.printTable(out, rep, points)
}

// errNoSweep: the burst buffer has no sweep (yet, or with the profile none).
var errNoSweep = errors.New("no sweep")

// sweepPoints reads the full sweep from the ConfigMap the status names.
func sweepPoints(ctx context.Context, k client.Reader, bb *v1alpha1.BurstBuffer) ([]limits.Point, string, error) {
	var name string
	if l := bb.Status.Limits; l != nil && l.Sweep != nil {
		name = l.Sweep.ConfigMapName
	}
	if name == "" {
		return nil, "", fmt.Errorf("%w: burst buffer %s/%s has not published a stage-3 sweep (phase %s, profile %q)", errNoSweep,
			bb.Namespace, bb.Name, orDash(string(bb.Status.Phase)), bb.Spec.Validation.Profile)
	}
	source := bb.Namespace + "/" + name
	var cm corev1.ConfigMap
	if err := k.Get(ctx, client.ObjectKey{Namespace: bb.Namespace, Name: name}, &cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, source, fmt.Errorf("the sweep's ConfigMap %s is gone", source)
		}
		return nil, source, fmt.Errorf("the sweep's ConfigMap %s: %w", source, err)
	}
	csv, ok := cm.Data[sweepConfigMapKey]
	if !ok {
		return nil, source, fmt.Errorf("the sweep's ConfigMap %s has no key %s", source, sweepConfigMapKey)
	}
	points, err := limits.ParseSweepCSV(bytes.NewReader([]byte(csv)))
	if err != nil {
		return nil, source, fmt.Errorf("the sweep's ConfigMap %s: %w", source, err)
	}
	return points, source, nil
}

// fillPlateau puts the measured figure of each operation's plateau point into the report:
// the status names the plateau's point but not what it measured.
func fillPlateau(s *limits.Sweep, points []limits.Point) {
	for _, sr := range []*limits.SweepResult{s.Write, s.Read} {
		if sr == nil || sr.PlateauBytesPerSecond.Known() {
			continue
		}
		for _, p := range points {
			if p.Operation == sr.Operation && p.Nodes == sr.Plateau.Nodes && p.ProcessesPerNode == sr.Plateau.ProcessesPerNode {
				sr.PlateauBytesPerSecond = limits.Bytes(p.BytesPerSecond)
			}
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
